// The model and provider labels of a request's series (gateway_requests_total, the duration histograms). A request
// refused before routing (401, 402, 403, 429) has no ctx.model, and one whose every attempt failed no
// ctx.resolvedProvider; the series still name what was asked for and who failed, so an error panel split by
// provider or model shows the fault. Bounded: a model label is a catalog id, "unknown" or empty — never a
// client's string.

import type { GatewayContext } from "../pipeline/context.ts";

/** The model label for a request whose body names a model the catalog does not have. */
export const UNKNOWN_MODEL = "unknown";

/** The served model, else the catalog model the request asked for; "unknown" for any other name, "" for none. */
export function modelLabel(ctx: GatewayContext): string {
  if (ctx.model) return ctx.model.id;
  const asked = ctx.body?.model;
  if (typeof asked !== "string") return "";
  return ctx.config.models.has(asked) ? asked : UNKNOWN_MODEL;
}

/** The provider that served the request, else the last one tried (the one that failed), else "". */
export function providerLabel(ctx: GatewayContext): string {
  return ctx.resolvedProvider ?? ctx.attempts[ctx.attempts.length - 1]?.provider ?? "";
}
