// Cheap request-size estimates shared by budget (worst case), rate-limit (token estimate) and the meter (the cap on
// an estimate). The body is serialised once per request (cached on the context).
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import { upstreamProtocolOf } from "../contracts/translator.ts";
import { requestedModels } from "../pipeline/requested-models.ts";
import { liveConfiguredEndpoints } from "../config/retirement.ts";
import { canThink } from "./thinking.ts";
import { outputAsk, UPSTREAM_PROTOCOLS, type AskingProtocol, type LimitTarget } from "./output-limit.ts";

const chars = new WeakMap<GatewayContext, number>();

/**
 * Size of the request body: an upper bound on its text's input tokens (a token is at least one character), not on
 * media's, billed by what it shows (a 1x1 PNG of 100 bytes: 2833 tokens), which the budget reserves up to the
 * context window instead. The bytes the client sent (Content-Length, never fewer than the characters) when known,
 * else the serialised body.
 */
export function bodyChars(ctx: GatewayContext): number {
  let n = chars.get(ctx);
  if (n === undefined) {
    const declared = Number(ctx.headers["content-length"]);
    n = ctx.body === undefined ? 0 : Number.isSafeInteger(declared) && declared > 0 ? declared : JSON.stringify(ctx.body).length;
    chars.set(ctx, n);
  }
  return n;
}

/** A typical-case input estimate: about four characters per token. */
export const inputEstimate = (ctx: GatewayContext): number => Math.ceil(bodyChars(ctx) / 4);

/** An endpoint of the catalog or a routed target: what decides its upstream protocol and output limit. */
export type OutputEndpoint = LimitTarget & Pick<Target, "nativeResponses">;

const clientOf = (ctx: GatewayContext): AskingProtocol =>
  ctx.endpoint === "messages" || ctx.endpoint === "responses" || ctx.endpoint === "gemini" ? ctx.endpoint : "chat";

/**
 * Output tokens (every choice) the request asks this endpoint's upstream for, exactly as its translator and driver
 * will write it; `perChoice` stands in where the request leaves the limit to the upstream (the model's maximum).
 */
export function outputTokensOn(ctx: GatewayContext, ep: OutputEndpoint, perChoice: number | undefined, reasoning = ep.reasoning === true): number | undefined {
  const client = clientOf(ctx);
  // Whether the model can think decides what a translated Gemini thinkingConfig becomes.
  const target = reasoning === (ep.reasoning === true) ? ep : { ...ep, reasoning };
  const driver = ctx.drivers?.get(ep.provider);
  const protocol = driver ? upstreamProtocolOf(driver, client, target as Target) : undefined;
  let worst: number | undefined;
  // A provider without a driver here (a project's own key): the most any protocol would be asked for.
  for (const p of protocol ? [protocol] : UPSTREAM_PROTOCOLS) {
    const ask = outputAsk(ctx.body, client, p, target);
    const per = ask.perChoice ?? perChoice;
    if (per === undefined) continue;
    if (worst === undefined || per * ask.choices > worst) worst = per * ask.choices;
  }
  return worst;
}

/**
 * The output tokens the request asks for at most on any endpoint of its models (fallbacks included), or undefined
 * when every one leaves the limit to the model (rate-limit's estimate: corrected by the real usage afterwards).
 */
export function requestedOutput(ctx: GatewayContext): number | undefined {
  if (ctx.endpoint !== "chat" && ctx.endpoint !== "messages" && ctx.endpoint !== "responses" && ctx.endpoint !== "gemini") return undefined;
  let worst: number | undefined;
  const now = Date.now();
  for (const { id } of requestedModels(ctx.body)) {
    const model = ctx.config.models.get(id);
    // A retired endpoint is sent nothing (core/config/retirement.ts): its output limit is no part of the estimate.
    for (const ep of model ? liveConfiguredEndpoints(model, now) : []) {
      const n = outputTokensOn(ctx, ep, undefined, canThink(model!));
      if (n !== undefined && (worst === undefined || n > worst)) worst = n;
    }
  }
  return worst;
}

/**
 * The input billed when the provider reported none: an estimate that errs high — three bytes a token, where text in
 * any script takes more (English ~4.5, code ~3.5, CJK ~3.6 in o200k_base) — of the whole body, JSON included.
 */
export const inputUpperEstimate = (ctx: GatewayContext): number => Math.ceil(bodyChars(ctx) / 3);
