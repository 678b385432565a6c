// The two core steps every pipeline gets: reading and validating the body (after auth) and the endpoint's terminal.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Next } from "../pipeline/define.ts";
import { endpointFor } from "./index.ts";
import { validationError } from "../http/validate.ts";
import { loadBody } from "../http/deferred-body.ts";

/** Reads the body (only now, after auth) and validates it. */
export async function validateStep(ctx: GatewayContext, next: Next): Promise<void> {
  await loadBody(ctx);
  const spec = endpointFor(ctx.endpoint, ctx.protocol);
  spec?.normalize?.(ctx.body);
  if (spec?.validate && !spec.validate(ctx.body)) {
    // Messages clients (Claude Code, the Anthropic SDK) read the Messages API's own wording.
    throw validationError(spec.validate, spec.invalidCode ?? "INVALID_REQUEST", spec.protocol === "anthropic" ? "anthropic" : "gateway");
  }
  spec?.prepare?.(ctx);
  return next();
}

export function runTerminal(ctx: GatewayContext): Promise<void> {
  return endpointFor(ctx.endpoint, ctx.protocol)!.terminal(ctx);
}
