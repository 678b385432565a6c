// The model, provider and code labels of a request's series (gateway_requests_total, the duration histograms). A request
// refused before routing (401, 402, 403, 429) has no ctx.model, and one whose every attempt failed no
// ctx.resolvedProvider; the series still name what was asked for and who failed, so an error panel split by
// provider or model shows the fault. Bounded: a model label is a catalog id, "unknown" or empty — never a
// client's string.

import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import { servedBy } from "../observability/served-by.ts";

/** The model label for a request whose body names a model the catalog does not have. */
export const UNKNOWN_MODEL = "unknown";

/** The served model, else the catalog model the request asked for; "unknown" for any other name, "" for none. */
export function modelLabel(ctx: GatewayContext): string {
  if (ctx.model) return ctx.model.id;
  const asked = ctx.body?.model;
  if (typeof asked !== "string") return "";
  return ctx.config.models.has(asked) ? asked : UNKNOWN_MODEL;
}

/**
 * The provider that served the request ("cache" for a response-cache hit, "replay" for an idempotent replay: no
 * provider's load, latency or errors), else the last one tried (the one that failed), else the last one skipped
 * because its circuit was open (named in the 502's details.skipped: while a provider is down, its requests fail
 * without being tried, and they are still its errors), else "".
 */
export function providerLabel(ctx: GatewayContext, error?: GatewayError): string {
  return servedBy(ctx) ?? ctx.attempts[ctx.attempts.length - 1]?.provider ?? skippedProvider(error) ?? "";
}

function skippedProvider(error: GatewayError | undefined): string | undefined {
  const skipped = error?.details?.skipped;
  if (!Array.isArray(skipped)) return undefined;
  const provider = (skipped[skipped.length - 1] as { provider?: unknown } | undefined)?.provider;
  return typeof provider === "string" ? provider : undefined;
}

/**
 * The code label: the status sent, except for a stream that failed after its 200 went out — that one is counted by
 * the status of the error it ended with (as if it had been the response's), so 5xx ratios see a stream cut by an
 * upstream failure or a shutdown. The access line keeps the 200 that was sent, with the errorCode and outcome.
 */
export function statusCode(outcome: Outcome): number {
  return outcome.streamError?.status ?? outcome.status;
}
