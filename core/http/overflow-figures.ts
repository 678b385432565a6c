// What an error writer needs to render an upstream's context overflow in the client's protocol
// (core/context-overflow.ts): which OpenAI-style client it is (its prompt's field), and for a Messages client the
// gateway's own figures, used where the provider named none (OpenAI's Responses, Groq and Bedrock say no numbers).
import type { GatewayContext } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import { isContextOverflow, type OverflowFigures } from "../context-overflow.ts";
import { inputEstimate } from "../metering/request-size.ts";
import { servedTarget } from "../metering/usage-ceiling.ts";
import { contextWindowOn } from "../metering/context-window.ts";

/** The OpenAI-style client protocol of the request, if it is one whose prompt has a field an overflow names. */
export function openaiClientOf(ctx: GatewayContext): "chat" | "responses" | undefined {
  return ctx.endpoint === "chat" || ctx.endpoint === "responses" ? ctx.endpoint : undefined;
}

/** The gateway's input estimate and the served endpoint's window, for an overflow error; undefined for any other. */
export function overflowFigures(ctx: GatewayContext, err: GatewayError): OverflowFigures | undefined {
  if (!isContextOverflow(err.details)) return undefined;
  const target = servedTarget(ctx);
  return { input_tokens: inputEstimate(ctx), context_window: target ? contextWindowOn(ctx, target) : undefined };
}
