// Moderation by a model: OpenAI's /moderations on an openai-protocol provider, or a catalog language model asked to
// judge the text and answer in JSON. Either way: bounded by the configured timeout (and the client leaving), its usage
// returned for the ledger, and any failure thrown for the caller's fail_open / fail_closed.
import { performance } from "node:perf_hooks";
import type { GuardrailModeration } from "../../../core/generated/types/gateway.ts";
import type { GatewayContext } from "../../../core/pipeline/context.ts";
import type { CallOptions, ProviderResult, Target, Usage } from "../../../core/contracts/provider.ts";
import { upstreamProtocolOf } from "../../../core/contracts/translator.ts";
import { estimateTokens } from "../../../core/metering/estimate-tokens.ts";
import { configFault, GatewayError } from "../../../core/errors.ts";
import { isRetryableStatus, OUT_OF_CREDIT } from "../../../core/retryable-status.ts";
import { judgeRequest, readVerdict } from "./judge.ts";

export interface Verdict {
  flagged: boolean;
  /** The categories that counted (after the configured `categories` filter). */
  categories: string[];
}

/** One moderation call as the ledger sees it. */
export interface ModerationCall {
  target: Target;
  usage: Usage;
  estimated: boolean;
  latencyMs: number;
  verdict?: Verdict;
  error?: GatewayError;
  /** With an error: may the moderation answer if the request is retried (see transient)? */
  retryable: boolean;
}

const DEFAULT_MODEL = "omni-moderation-latest";

/** Runs `send` with the moderation's deadline, and the request's own signal: a wait that cannot outlast either. */
async function bounded<T>(ctx: GatewayContext, timeoutMs: number, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  let timer: NodeJS.Timeout | undefined;
  // A driver that ignored its signal still cannot hold the request: the race ends at the deadline.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GatewayError(504, "UPSTREAM_TIMEOUT", `moderation did not answer within ${timeoutMs} ms`)), timeoutMs + 50);
  });
  try {
    return await Promise.race([send(signal), deadline]);
  } catch (e) {
    if (timeout.aborted) throw new GatewayError(504, "UPSTREAM_TIMEOUT", `moderation did not answer within ${timeoutMs} ms`, { cause: e });
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function callOptions(ctx: GatewayContext, signal: AbortSignal, usage: (u: Usage) => void): CallOptions {
  return { signal, requestId: ctx.requestId, clientHeaders: {}, reportUsage: usage, reportFirstToken: () => {} };
}

/** With `categories` configured only those count; without, the model's own `flagged` does. */
function verdictOf(spec: GuardrailModeration, flagged: boolean, categories: string[]): Verdict {
  if (!spec.categories?.length) return { flagged, categories };
  const counted = categories.filter((c) => spec.categories!.includes(c));
  return { flagged: counted.length > 0, categories: counted };
}

/**
 * Whether a failure may pass on a retry: a timeout; the moderation upstream's 408, 409, 429 or 5xx; a connection
 * failure or a malformed answer. Its 400/401/403/404 (the gateway's key, model or URL for it), an account out of
 * credit and a judge the config cannot call fail the same way every time.
 */
function transient(err: GatewayError): boolean {
  if (err.code === "UPSTREAM_TIMEOUT") return true;
  if (err.details?.reason === OUT_OF_CREDIT) return false; // a 429 that says the account has no credit left
  const upstream = err.details?.upstream_status;
  return typeof upstream === "number" ? isRetryableStatus(upstream) : err.retryable;
}

/** The moderation's verdict on `text`, with what it used. Never throws: a failure comes back as `error`. */
export async function moderate(ctx: GatewayContext, spec: GuardrailModeration, text: string): Promise<ModerationCall> {
  const t0 = performance.now();
  const timeoutMs = spec.timeout_ms ?? 5000;
  let target: Target | undefined;
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let estimated = false;
  try {
    if (spec.judge !== undefined) {
      const { target: t, send } = judgeTarget(ctx, spec.judge);
      target = t;
      const answer = await bounded(ctx, timeoutMs, (signal) => send(judgeRequest(spec, text), callOptions(ctx, signal, (u) => (usage = u))));
      if (!usage.inputTokens && !usage.outputTokens) {
        usage = { inputTokens: estimateTokens(text), outputTokens: 0 };
        estimated = true;
      }
      const v = readVerdict(answer);
      return { target, usage, estimated, latencyMs: performance.now() - t0, verdict: verdictOf(spec, v.flagged, v.categories), retryable: false };
    }
    const provider = spec.provider!;
    target = { modelId: `${provider}/${spec.model ?? DEFAULT_MODEL}`, provider, upstreamModel: spec.model ?? DEFAULT_MODEL, pricing: spec.pricing ?? {}, timeoutMs };
    const driver = ctx.drivers.get(provider);
    if (!driver?.moderations) throw configFault(`provider "${provider}" is not available for moderation`, { provider });
    const t = target;
    const r = await bounded(ctx, timeoutMs, (signal) => driver.moderations!({ input: text }, t, callOptions(ctx, signal, () => {})));
    usage = { inputTokens: estimateTokens(text), outputTokens: 0 };
    estimated = true;
    const results = r.kind === "json" ? (r.body as any)?.results : undefined;
    if (!Array.isArray(results) || !results.length) throw new GatewayError(502, "UPSTREAM_ERROR", "moderation answered without results", { retryable: true });
    const flaggedCats = new Set<string>();
    let flagged = false;
    for (const res of results) {
      if (res?.flagged === true) flagged = true;
      for (const [cat, on] of Object.entries(res?.categories ?? {})) if (on === true) flaggedCats.add(cat);
    }
    return { target, usage, estimated, latencyMs: performance.now() - t0, verdict: verdictOf(spec, flagged, [...flaggedCats]), retryable: false };
  } catch (e) {
    // A GatewayError keeps its kind (the upstream's status, a timeout, a config fault); anything else is unforeseen.
    const error = e instanceof GatewayError ? e : new GatewayError(502, "UPSTREAM_ERROR", "moderation failed", { cause: e, retryable: true });
    const fallback: Target = target ?? { modelId: spec.judge ?? `${spec.provider}/${spec.model ?? DEFAULT_MODEL}`, provider: spec.provider ?? "", upstreamModel: "", pricing: {} };
    return { target: fallback, usage, estimated, latencyMs: performance.now() - t0, error, retryable: transient(error) };
  }
}

/** The judge model's first endpoint this snapshot can call, and how to send it a chat request (translated if need be). */
function judgeTarget(ctx: GatewayContext, id: string): { target: Target; send: (body: any, call: CallOptions) => Promise<unknown> } {
  const model = ctx.config.models.get(id);
  for (const ep of model?.endpoints ?? []) {
    const driver = ctx.drivers.get(ep.provider);
    if (!driver) continue;
    const target: Target = { modelId: id, provider: ep.provider, upstreamModel: ep.upstreamModel, pricing: ep.pricing, contextWindow: ep.contextWindow, maxTokens: ep.maxTokens };
    if (ep.reasoningModel) target.reasoningModel = true;
    const up = upstreamProtocolOf(driver, "chat", target);
    const tr = up && ctx.gateway.translators.chat[up];
    if (!tr) continue;
    const send = async (body: any, call: CallOptions) => {
      const t = tr.request(body, target, { cacheMarkers: false, cacheAuto: false, driverProtocol: driver.protocol, provider: driver.name });
      const op = driver[t.op];
      if (!op) throw configFault(`provider "${driver.name}" cannot serve the judge model`, { provider: driver.name });
      let r: ProviderResult;
      try {
        r = await op.call(driver, t.body, target, call);
      } catch (e) {
        throw e instanceof GatewayError ? tr.error(e, t.state) : e;
      }
      if (r.kind !== "json") throw new GatewayError(502, "UPSTREAM_ERROR", "the judge model did not answer in JSON", { retryable: true });
      return tr.response(r.body, t.state, call);
    };
    return { target, send };
  }
  throw configFault(`judge model "${id}" has no provider available`, { model: id });
}
