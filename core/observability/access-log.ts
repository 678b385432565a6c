// One structured line per request when it finishes: who (project, key id — never the key), what (endpoint,
// model, every attempt), how it ended (status, error code, outcome, aborted), usage and cost, timings and bytes.
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import type { Usage } from "../contracts/provider.ts";
import { costUsd } from "./headers.ts";
import { servedBy } from "./served-by.ts";
import { shownGenerationId } from "./headers.ts";
import { outcomeOf } from "../metering/meter.ts";
import { billableUsage } from "../metering/sane-usage.ts";
import { servedTarget } from "../metering/usage-ceiling.ts";
import { hiddenDownloadCause } from "../net/download-cause.ts";
import { askedForStream } from "./asked-stream.ts";

export interface AccessTiming {
  ttfbMs: number;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  traceId?: string;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/**
 * The usage the ledger bills (usage-metering's meter, when it ran: estimated for a stream cut short), else what the
 * provider reported. gateway_tokens_total counts the same figure (core/http/handle.ts).
 */
export function billedUsage(ctx: GatewayContext, outcome: Outcome): Usage | undefined {
  return billed(ctx, outcome)?.usage;
}

/** billedUsage, and whether it is the meter's estimate (the trace says so: core/observability/tracing.ts). */
export function billed(ctx: GatewayContext, outcome: Outcome): { usage: Usage; estimated: boolean } | undefined {
  const meter = (ctx as { meter?: { finalUsage?(o: Outcome): { usage: Usage; estimated?: boolean } | undefined } }).meter;
  const m = meter?.finalUsage?.(outcome);
  if (m) return { usage: m.usage, estimated: m.estimated === true };
  const reported = billableUsage(ctx); // never the raw figures (Infinity, 1e308)
  return reported && { usage: reported, estimated: false };
}

export function accessRecord(ctx: GatewayContext, outcome: Outcome, t: AccessTiming): Record<string, unknown> {
  const err = outcome.error ?? outcome.streamError;
  const usage = ctx.attempts.length ? billedUsage(ctx, outcome) : undefined;
  const r: Record<string, unknown> = {
    requestId: ctx.requestId,
    generationId: shownGenerationId(ctx),
    traceId: t.traceId,
    project: ctx.auth?.projectId,
    keyId: ctx.auth?.keyId,
    method: ctx.method,
    path: ctx.path.split("?")[0],
    endpoint: ctx.endpoint,
    // An unknown model is logged as asked, cut short: the client chose that string.
    model: ctx.model?.id ?? (typeof ctx.body?.model === "string" ? ctx.body.model.slice(0, 200) : undefined),
    // Who served it, or whose work is billed: a stream the client left while its opening events were held was never
    // adopted as the answer, yet the ledger bills its attempt, and names that attempt's provider.
    provider: servedBy(ctx) ?? (usage ? ctx.attempts[ctx.attempts.length - 1]!.provider : undefined),
    attempts: ctx.attempts.map((a) => ({ provider: a.provider, model: a.model, status: a.status, ...(a.errorCode ? { errorCode: a.errorCode } : {}), ms: a.latencyMs })),
    status: outcome.status,
    errorCode: err?.code,
    // What the client was not told: why its media URL could not be downloaded (refused, reset, TLS).
    errorCause: hiddenDownloadCause(err),
    // The ledger's verdict: a stream that failed after its 200 went out is "stream_error" (status stays what was sent).
    outcome: outcomeOf(outcome, ctx),
    // As the client asked (asked-stream.ts): also one refused before answering, or that left before its stream was adopted.
    stream: askedForStream(ctx),
    aborted: outcome.aborted,
    ttfbMs: round(t.ttfbMs),
    durationMs: round(t.durationMs),
    bytesIn: t.bytesIn,
    bytesOut: t.bytesOut,
  };
  if (usage) {
    r.inputTokens = usage.inputTokens || 0;
    r.outputTokens = usage.outputTokens || 0;
    if (usage.cacheReadTokens) r.cacheReadTokens = usage.cacheReadTokens;
    if (usage.cacheWriteTokens) r.cacheWriteTokens = usage.cacheWriteTokens;
    // At the prices the ledger bills: the endpoint the last attempt called (servedTarget, as the meter).
    r.costUsd = costUsd(ctx, usage, servedTarget(ctx));
  }
  // What guardrails did (action:rule), never what they matched.
  if (ctx.guardrail) r.guardrails = ctx.guardrail.actions;
  // The response cache's verdict (hit or miss) when the request used it; a hit costs the hit price.
  const cache = ctx.responseHeaders["x-mg-cache"];
  if (cache) r.cache = cache;
  if (ctx.cacheHit) r.costUsd = ctx.cacheHit.costUsd;
  else if (ctx.replayed) r.costUsd = "0";
  return r;
}
