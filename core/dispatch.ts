// The implicit terminal step: walk ctx.targets, call the provider, record every attempt in modelAttempts.
// fallback (when in the pipeline) raises ctx.maxAttempts and supplies ctx.retryDelay; without it one target is tried.
import { performance } from "node:perf_hooks";
import type { GatewayContext, GatewayResponse } from "./pipeline/context.ts";
import type { CallOptions, ProviderDriver, ProviderResult, Target } from "../providers/types.ts";
import { GatewayError, toGatewayError } from "./errors.ts";

export type OperationName = "chat" | "messages" | "embeddings" | "rerank" | "images" | "videos";

declare module "./pipeline/context.ts" {
  interface GatewayContext {
    /** Provider drivers of the config snapshot this request runs on. */
    drivers: Map<string, ProviderDriver>;
    /** Wait before the next attempt (fallback's backoff); resolve at once when absent. */
    retryDelay?: (err: GatewayError, attempt: number) => Promise<void>;
    /** Lets a plugin (stream-transcoder) call a driver that does not speak the client's protocol natively. */
    invoke?: (driver: ProviderDriver, op: OperationName, target: Target, call: CallOptions) => Promise<ProviderResult> | undefined;
  }
}

export function callOptions(ctx: GatewayContext): CallOptions {
  return {
    signal: ctx.signal,
    requestId: ctx.requestId,
    clientHeaders: ctx.headers,
    reportUsage: (u) => { ctx.usage = u; },
    reportFirstToken: () => { ctx.ttftMs ??= performance.now() - ctx.startedAt; },
  };
}

export async function dispatch(ctx: GatewayContext, op: OperationName): Promise<void> {
  const n = Math.min(Math.max(1, ctx.maxAttempts), ctx.targets.length);
  if (n === 0) throw new GatewayError(502, "UPSTREAM_ERROR", "No provider is available for this request");
  const call = callOptions(ctx);
  let last: GatewayError | undefined;
  for (let i = 0; i < n; i++) {
    const target = ctx.targets[i]!;
    const driver = ctx.drivers.get(target.provider);
    const t0 = performance.now();
    try {
      if (!driver) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider "${target.provider}" is not configured`, { retryable: true });
      const pending = ctx.invoke?.(driver, op, target, call) ?? invokeNative(driver, op, ctx.body, target, call);
      const result = await pending;
      const latency = performance.now() - t0;
      ctx.gateway.metrics.upstream.observe({ provider: target.provider, model: target.modelId, outcome: "ok" }, latency / 1000);
      ctx.attempts.push({ model: target.modelId, provider: target.provider, status: result.status ?? 200, latencyMs: round(latency) });
      ctx.resolvedProvider = target.provider;
      ctx.response = toResponse(ctx, result);
      return;
    } catch (e) {
      const err = toGatewayError(e);
      const latency = performance.now() - t0;
      ctx.gateway.metrics.upstream.observe({ provider: target.provider, model: target.modelId, outcome: "error" }, latency / 1000);
      ctx.attempts.push({ model: target.modelId, provider: target.provider, status: err.status, errorCode: err.code, latencyMs: round(latency) });
      last = err;
      if (!err.retryable || ctx.signal.aborted || i === n - 1) break;
      await ctx.retryDelay?.(err, i);
    }
  }
  throw withAttempts(ctx, last!);
}

function invokeNative(driver: ProviderDriver, op: OperationName, body: unknown, target: Target, call: CallOptions): Promise<ProviderResult> {
  const fn = driver[op];
  if (!fn) {
    throw new GatewayError(400, "INVALID_REQUEST", `Provider "${driver.name}" (${driver.protocol}) does not support ${op} requests`, {
      details: { field: "model", provider: driver.name },
    });
  }
  return fn.call(driver, body, target, call);
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** The gateway block every JSON result carries (providerMetadata.gateway). */
export function gatewayMetadata(ctx: GatewayContext) {
  return { generationId: ctx.generationId, resolvedProvider: ctx.resolvedProvider, modelAttempts: ctx.attempts };
}

function toResponse(ctx: GatewayContext, r: ProviderResult): GatewayResponse {
  if (r.headers) Object.assign(ctx.responseHeaders, r.headers);
  const status = r.status ?? 200;
  if (r.kind === "stream") return { kind: "stream", status, events: r.events };
  if (r.kind === "bytes") return { kind: "bytes", status, contentType: r.headers["content-type"] ?? "application/octet-stream", body: r.body };
  const body = r.body as Record<string, unknown>;
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const pm = (body.providerMetadata as Record<string, unknown> | undefined) ?? {};
    body.providerMetadata = { ...pm, gateway: gatewayMetadata(ctx) };
  }
  return { kind: "json", status, body };
}

/** After the last attempt failed: the error the client sees carries every attempt. */
function withAttempts(ctx: GatewayContext, err: GatewayError): GatewayError {
  if (ctx.attempts.length <= 1 && err.code !== "UPSTREAM_ERROR" && err.code !== "UPSTREAM_TIMEOUT") return err;
  return new GatewayError(err.status, err.code, err.message, {
    details: { ...err.details, attempts: ctx.attempts },
    retryAfter: err.retryAfter,
    headers: err.headers,
    cause: err.cause,
    type: err.type,
  });
}
