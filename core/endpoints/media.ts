// Shared steps of the embeddings, rerank, images and videos endpoints: run dispatch with a canonical call body
// (the client's validated body stays untouched on ctx for the plugins), capability checks and catalog limits.
import { performance } from "node:perf_hooks";
import type { GatewayContext } from "../pipeline/context.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import { dispatch, gatewayMetadata, invokeNative, type OperationName } from "../dispatch.ts";
import { GatewayError, type ErrorCode } from "../errors.ts";
import type { Target } from "../contracts/provider.ts";
import { timeLimitError } from "../time-limit-cut.ts";
import { aModelOfType } from "./model-type-words.ts";

export interface DispatchOverrides<T = unknown> {
  signal?: AbortSignal;
  targets?: Target[];
  drivers?: GatewayContext["drivers"];
  /**
   * Throws when a driver's output is not a usable answer (core/invalid-answer.ts). It runs inside the attempt, so
   * the failure is retried and counted against that endpoint like any upstream error, before anything is billed.
   */
  check?: (out: T, provider: string) => void;
}

/** dispatch() on a shallow copy whose body is the canonical call; returns the driver's output. */
export async function dispatchCall<T>(ctx: GatewayContext, op: OperationName, call: unknown, o: DispatchOverrides<T> = {}): Promise<T> {
  const sub: GatewayContext = { ...ctx, body: call, signal: o.signal ?? ctx.signal, targets: o.targets ?? ctx.targets, drivers: o.drivers ?? ctx.drivers };
  if (o.check) sub.invoke = checkedInvoke(sub.invoke, o.check);
  try {
    await dispatch(sub, op);
  } finally {
    ctx.resolvedProvider = sub.resolvedProvider;
    // A fallback model may have served: the answer names it (servedModelId), and its upstream's id.
    ctx.resolvedTarget = sub.resolvedTarget;
    ctx.upstreamModel = sub.upstreamModel;
    if (sub.model) ctx.model = sub.model;
    if (sub.ttftMs !== undefined) ctx.ttftMs ??= sub.ttftMs;
  }
  const r = sub.response;
  if (!r || r.kind !== "json") throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${sub.resolvedProvider} returned no ${op} result`);
  return r.body as T;
}

/** ctx.invoke (or the driver's own operation) with every JSON output put through check before dispatch takes it. */
function checkedInvoke<T>(inner: GatewayContext["invoke"], check: (out: T, provider: string) => void): NonNullable<GatewayContext["invoke"]> {
  return async (c, driver, op, target, opts) => {
    // inner may set c.body to this target's own call (images) and leave the call to the driver: read it after.
    const result = await (inner?.(c, driver, op, target, opts) ?? invokeNative(driver, op, c.body, target, opts));
    if (result.kind === "json") check(result.body as T, target.provider);
    return result;
  };
}

/** The gateway model id the answer names: the one that served (a fallback's), else the one asked for. */
export function servedModelId(ctx: GatewayContext): string {
  return ctx.resolvedTarget?.modelId ?? ctx.model?.id ?? String(ctx.body?.model ?? "");
}

export function metadata(ctx: GatewayContext) {
  return { gateway: gatewayMetadata(ctx) };
}

const TRACE_ID = /^[\w.:\-/+=]{1,128}$/;

/** x-mg-trace-id (listed on videos and rerank): echoed back so callers can correlate; malformed values are ignored. */
export function echoTraceId(ctx: GatewayContext): void {
  const t = ctx.headers["x-mg-trace-id"];
  if (typeof t === "string" && TRACE_ID.test(t)) ctx.responseHeaders["x-mg-trace-id"] = t;
}

/** Unknown body fields (validate what you know, pass through what you don't). */
export function extraFields(body: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in body) if (!known.includes(k)) out[k] = body[k];
  return out;
}

/** The catalog entry's `limits` object (free-form, documented in docs/media.md). */
export function limitsOf(model: ModelRuntime): Record<string, any> {
  return (model.config.limits ?? {}) as Record<string, any>;
}

/** The model must be of the endpoint's type (a chat model cannot embed). */
export function requireType(model: ModelRuntime, type: ModelRuntime["type"], status: number, code: ErrorCode): void {
  if (model.type === type) return;
  throw new GatewayError(status, code, `Model "${model.id}" is ${aModelOfType(model.type)} and cannot serve this endpoint (it needs ${aModelOfType(type)})`, {
    details: { field: "model", model_type: model.type },
  });
}

/** Targets with the upstream timeout raised to the endpoint's own hold time. */
export function withTimeout(targets: Target[], ms: number): Target[] {
  return targets.map((t) => ({ ...t, timeoutMs: Math.max(t.timeoutMs ?? 0, ms) }));
}

/**
 * After the work has been stopped by its time limit, how long it may take to settle before the 504 goes out anyway.
 * Drivers stop at the abort at once; this only bounds one that does not (its attempt is then left off the record).
 */
const SETTLE_AFTER_LIMIT_MS = 5_000;

/**
 * Rejects with 504 UPSTREAM_TIMEOUT when the work takes longer than ms. The work is aborted with that 504 (not taken
 * for a client that left: core/time-limit-cut.ts) and waited for, so the attempt it cut is recorded as the timeout
 * before the request's ledger record is written.
 */
export async function withDeadline<T>(ms: number, what: string, work: (signal: AbortSignal) => Promise<T>, parent?: AbortSignal): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let expired: GatewayError | undefined;
  const started = performance.now();
  // The limit as configured (timeout_seconds 0.5 is 0.5 s, not "1 s").
  const seconds = Math.round(ms) / 1000;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = timeLimitError(new GatewayError(504, "UPSTREAM_TIMEOUT", `${what} did not finish within ${seconds} s`, {
        retryable: true, details: { limit_seconds: seconds, elapsed_ms: Math.round(performance.now() - started) },
      }));
      controller.abort(expired);
      timer = setTimeout(() => reject(expired), SETTLE_AFTER_LIMIT_MS);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), stopped]);
  } catch (e) {
    throw expired ?? e;
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", onAbort);
  }
}
