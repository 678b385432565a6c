// Response headers a caller can use without parsing the body: which generation and provider served it, what it
// cost (when known before the first byte: JSON answers; a stream's cost is in the ledger), and server-timing with
// the gateway's own time and the upstream's.
import { performance } from "node:perf_hooks";
import type { GatewayContext } from "../pipeline/context.ts";
import { requestCost } from "../metering/turn-cost.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import { billableUsage } from "../metering/sane-usage.ts";
import { servedTarget } from "../metering/usage-ceiling.ts";
import type {} from "../metering/meter.ts"; // ctx.meter

/**
 * The usage the ledger bills for this answer: the meter's (estimated where the upstream reported none or nonsense),
 * else the upstream's made sane — never its raw figures, which could be 1e308 or Infinity (big.js throws on those).
 */
function ledgerUsage(ctx: GatewayContext): Usage | undefined {
  return ctx.meter?.finalUsage()?.usage ?? billableUsage(ctx);
}

/**
 * The request's cost in USD (decimal string) for this usage at the prices of `target` (by default the endpoint the
 * ledger prices by, servedTarget); sandbox costs 0.
 */
export function costUsd(ctx: GatewayContext, usage: Usage | undefined = ledgerUsage(ctx), target: Target | undefined = servedTarget(ctx)): string | undefined {
  if (!usage) return undefined;
  if (ctx.auth?.sandbox || target?.sandbox) return "0";
  return target ? requestCost(ctx, usage, target).usd : undefined;
}

/**
 * Whether the request has a ledger record under its generation id (a stream's is written as it ends): it reached a
 * provider (count_tokens excepted: never billed), was answered from the response cache or refused by a guardrail.
 * A refusal by a policy (401, 402 budget, 403 allowlist, 429 rate limit), an invalid request or an admin call has
 * none — nor a store write, so a flood of them costs the store nothing; /metrics counts them.
 */
export function recorded(ctx: GatewayContext): boolean {
  return ctx.cacheHit !== undefined || ctx.guardrail?.blocked !== undefined || (ctx.attempts.length > 0 && ctx.endpoint !== "count_tokens");
}

/**
 * The generation id the client is given, the one a ledger record has: an idempotent replay's or a video request's
 * (already in the response headers: the original's, the job's), else this request's where it is recorded, else none.
 * The access line logs the same, so a client's id finds its line.
 */
export function shownGenerationId(ctx: GatewayContext): string | undefined {
  return ctx.responseHeaders["x-mg-generation-id"] ?? (recorded(ctx) ? ctx.generationId : undefined);
}

/**
 * Adds x-mg-generation-id (only where a ledger record has it), x-mg-provider, x-mg-cost-usd (where the request was
 * billed, before the first byte) and server-timing to a response's headers. A generation id already there is kept: an idempotent replay names the original's, whose
 * ledger record it is, and a video request the job's. Messages endpoints also get Anthropic's `request-id` (the
 * gateway's request id, as their errors have it), which the Anthropic SDK shows as `requestID`.
 */
export function addObservabilityHeaders(ctx: GatewayContext, h: Record<string, string>): void {
  if (ctx.protocol === "anthropic") h["request-id"] = ctx.requestId;
  if (h["x-mg-generation-id"] === undefined && recorded(ctx)) h["x-mg-generation-id"] = ctx.generationId;
  if (ctx.resolvedProvider) h["x-mg-provider"] = ctx.resolvedProvider;
  // A JSON answer's cost, an error's too: one after billed work (a Responses mcp loop whose later turn failed, the
  // turns before it billed) says what the ledger bills, and one after none has no usage and so no header.
  if (ctx.response?.kind !== "stream" && ctx.attempts.length) {
    const cost = costUsd(ctx);
    if (cost !== undefined) h["x-mg-cost-usd"] = cost;
  }
  h["server-timing"] = serverTiming(ctx);
}

/** `gateway;dur=…, upstream;dur=…`: upstream = every attempt's time to the provider's answer, gateway = the rest. */
export function serverTiming(ctx: GatewayContext): string {
  const total = performance.now() - ctx.startedAt;
  let upstream = 0;
  for (const a of ctx.attempts) upstream += a.latencyMs;
  const own = Math.max(0, total - upstream);
  return ctx.attempts.length ? `gateway;dur=${own.toFixed(1)}, upstream;dur=${upstream.toFixed(1)}` : `gateway;dur=${own.toFixed(1)}`;
}
