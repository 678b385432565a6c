// The implicit terminal step: walk ctx.targets, call the provider, record every attempt in modelAttempts.
// fallback (when in the pipeline) raises ctx.maxAttempts and supplies ctx.retryDelay; without it one target is tried.
// Retries happen only on retryable failures (connection errors, timeouts, 408, 409, 429, 5xx), never on request errors.
// A stream is committed once its first event has arrived: a failure before that falls back silently, a failure after
// it reaches the client as the protocol's error event. The upstream's first token commits it as well, though a
// translator still holds it back from the client (a Gemini function call goes out whole): that failure is the client's
// answer, never asked again elsewhere. Endpoints whose circuit is open are skipped (core/health).
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { GatewayContext, GatewayResponse, ModelAttempt } from "./pipeline/context.ts";
import type { CallOptions, ProviderDriver, ProviderResult, Target, Usage } from "./contracts/provider.ts";
import { Unsupported } from "./contracts/translator.ts";
import type { SseEvent } from "./sse/parse.ts";
import { CAN_PUSH, PUSH, canPush, type EventSink, type PushControl, type PushableIterator } from "./sse/push.ts";
import { configFault, GatewayError, saysDoNotRetry, toGatewayError } from "./errors.ts";
import { shutdownError } from "./shutdown.ts";
import { healthOf, type HealthRegistry } from "./health/index.ts";
import { statsOf, type StatsService } from "./stats/index.ts";
import { byokDriver } from "./byok-drivers.ts";
import { RetryHint, type Failure } from "./retry-hint.ts";
import { ANSWER_TOO_LARGE, EVENT_TOO_LARGE, isRetryableStatus, OUT_OF_CREDIT, UPSTREAM_NOT_FOUND } from "./retryable-status.ts";
import { isErrorEvent, redactErrorEvent } from "./secrets/error-events.ts";
import { inputEstimate } from "./metering/request-size.ts";
import { markFinalUsage } from "./metering/final-usage.ts";
import type {} from "./metering/meter.ts"; // ctx.streamLeftInHold
import { nameJsonModel, StreamModelNamer, type NamedProtocol } from "./served-model.ts";
import { failedAttemptOutcome } from "./attempt-outcome.ts";
import { timeLimitCut } from "./time-limit-cut.ts";
import { noteAttemptTarget } from "./pipeline/attempt-target.ts";

export type OperationName = "chat" | "messages" | "responses" | "gemini" | "countTokens" | "embeddings" | "rerank" | "images" | "videos";

/** What dispatch tells the retry policy about the next attempt. */
export interface RetryInfo {
  /**
   * The next attempt goes to an endpoint that already failed in this request (a second pass over the targets): the
   * error handed over is then that endpoint's own latest failure, and dispatch counts the wait from that failure.
   */
  sameEndpoint: boolean;
}

declare module "./pipeline/context.ts" {
  interface GatewayContext {
    /** Provider drivers of the config snapshot this request runs on. */
    drivers: Map<string, ProviderDriver>;
    /**
     * Fallback's backoff: milliseconds to wait before the next attempt, or null to give up on that endpoint
     * (e.g. its Retry-After is longer than we are willing to wait). Absent: no wait.
     */
    retryDelay?: (err: GatewayError, attempt: number, next: RetryInfo) => number | null;
    /**
     * Lets a plugin (stream-transcoder) call a driver that does not speak the client's protocol natively. It is
     * handed the context rather than closing over it: a closure per request stored here kept every request's
     * objects alive through young-generation GCs (a sixth of all allocation promoted; scavenge pauses 2-3x as long).
     */
    invoke?: (ctx: GatewayContext, driver: ProviderDriver, op: OperationName, target: Target, call: CallOptions) => Promise<ProviderResult> | undefined;
    /** The target that served the request (fallback models change the model: ctx.model follows it). */
    resolvedTarget?: Target;
    /** The upstream's own id for the model that served the request, as its answer named it (else as configured). */
    upstreamModel?: string;
  }
}

/**
 * Attempts that say nothing about an endpoint's health or live stats: the simulator's, and token counts (mostly
 * computed in the gateway; a count must neither pass for a working endpoint nor be refused by an open circuit).
 */
const unobserved = (target: Target, op: OperationName) => target.sandbox === true || op === "countTokens";

/**
 * Whose circuit breaker an attempt answers to (core/health): undefined for the gateway's own key; for a project's own
 * key (BYOK) that project's, so its exhausted quota or broken base_url never opens the circuit every other project
 * shares, and a circuit opened by the gateway's failing key never keeps the project from its own.
 */
const keyOwner = (ctx: GatewayContext, target: Target): string | undefined => (target.credentials ? (ctx.auth?.projectId ?? "") : undefined);
/**
 * Live stats (the catalog's uptime and latency, routing's ttft/tps sort) describe the gateway's own path to a
 * provider: a project's own key or base_url says nothing about it, and must not move what other tenants see or get.
 */
const sharedStats = (target: Target) => !target.credentials;

/** Response header with the upstream's own model id (a stream has no providerMetadata to carry it). */
export const UPSTREAM_MODEL_HEADER = "x-mg-upstream-model";

/** The operations whose answers name a model (the other endpoints write the served id into their own bodies). */
const namedProtocol = (op: OperationName): NamedProtocol | undefined => (op === "chat" || op === "messages" || op === "responses" || op === "gemini" ? op : undefined);

/**
 * Upstream statuses worth another try (core/retryable-status.ts), or an error its driver knows to be (Bedrock's
 * ModelErrorException is a 424), but never an account out of credit, whatever its status (OpenAI's is a 429).
 * Transport failures carry retryable: true.
 */
export function isRetryable(err: GatewayError): boolean {
  if (err.details?.reason === OUT_OF_CREDIT) return false;
  const upstream = err.details?.upstream_status;
  if (typeof upstream === "number") return isRetryableStatus(upstream) || err.retryable;
  return err.retryable;
}

/**
 * Configuration faults by reason: no driver, no credentials, an upstream model or deployment that is not there, an
 * account out of credit said with another status than 402.
 */
const CONFIG_FAULTS: ReadonlySet<unknown> = new Set(["not_configured", "no_credentials", UPSTREAM_NOT_FOUND, OUT_OF_CREDIT]);

/** An answer past the gateway's bounds (server.upstream_limits): the same request would be as large again. */
const OVERSIZE: ReadonlySet<unknown> = new Set([ANSWER_TOO_LARGE, EVENT_TOO_LARGE]);
const oversize = (err: GatewayError) => err.code === "UPSTREAM_ERROR" && OVERSIZE.has(err.details?.reason);
/** The provider account behind the key has no credit left: a 402, or said with another status (OUT_OF_CREDIT). */
const outOfCredit = (err: GatewayError) => err.details?.reason === OUT_OF_CREDIT || err.details?.upstream_status === 402;

/**
 * A fault of one endpoint, not of the request: the upstream refused the gateway's credentials (401, 403) or
 * answered another 4xx that is not about the request (a wrong base_url's 404, 402 out of credit), said its account is
 * out of credit with another status (OpenAI's 429 insufficient_quota), has no such model or deployment, no driver,
 * no credentials, or sent an answer past the gateway's bounds (oversize: asked again, it
 * would generate, and bill, as large an answer). Asking it again cannot pass, but the model's next endpoint may be
 * configured right (or answer within the bounds): that endpoint is given up, the others are still tried. (Content
 * refusals and other non-retryable answers are not: another provider would be asked to generate what one refused.)
 */
function endpointFault(err: GatewayError): boolean {
  if (err.status !== 502 || err.code !== "UPSTREAM_ERROR" || isRetryable(err)) return false;
  const reason = err.details?.reason;
  if (CONFIG_FAULTS.has(reason) || OVERSIZE.has(reason)) return true;
  const status = err.details?.upstream_status;
  return reason === undefined && typeof status === "number" && status >= 400 && status < 500;
}

/** When each (provider, reason) fault was last logged: an operator hears of a refused key once a minute, not per request. */
const faultLogged = new Map<string, number>();

/** A warning that an endpoint of the gateway's own configuration fails (a revoked key is otherwise only fallen back on). */
function warnEndpointFault(ctx: GatewayContext, target: Target, err: GatewayError): void {
  const reason = String(err.details?.reason ?? err.details?.upstream_status ?? "");
  const key = `${target.provider}\u0000${reason}`;
  const now = Date.now();
  if ((faultLogged.get(key) ?? 0) > now - 60_000) return;
  if (faultLogged.size > 1000) faultLogged.clear();
  faultLogged.set(key, now);
  const what = oversize(err)
    ? "an endpoint sent an answer past the gateway's bounds: it is not asked again for that request (the model's next endpoint is, if it has one); raise the setting the error names if such answers are expected"
    : outOfCredit(err)
      ? "an endpoint's provider account is out of credit or over its spending cap: requests pass over it (to the model's next endpoint, if it has one) until the account is topped up or its cap raised"
      : "an endpoint's configuration fails: requests pass over it (to the model's next endpoint, if it has one) until the config is fixed";
  ctx.gateway.log.warn(`${what} (logged once a minute)`, { provider: target.provider, model: target.modelId, reason, error: err.message });
}

/** One attempt's private view of usage and first-token time, so a failed attempt never leaks into ctx. */
class AttemptCall {
  usage?: Usage;
  firstTokenAt?: number;
  /** A stream's first upstream event (a relay may hold it back from the client a while: core/sse/opening-hold.ts). */
  firstEventAt?: number;
  committed = false;
  readonly options: CallOptions;
  constructor(private readonly ctx: GatewayContext) {
    this.options = {
      signal: ctx.signal,
      requestId: ctx.requestId,
      clientHeaders: ctx.headers,
      // Only Messages states input before the upstream reports it (message_start): no estimate for the others.
      inputEstimate: ctx.endpoint === "messages" ? inputEstimate(ctx) : undefined,
      reportUsage: (u, how) => {
        if (how?.final) markFinalUsage(u);
        this.usage = u;
        if (this.committed) ctx.usage = u;
      },
      reportFirstToken: () => {
        this.firstTokenAt ??= performance.now();
        if (this.committed) ctx.ttftMs ??= this.firstTokenAt - ctx.startedAt;
      },
      reportFirstEvent: () => {
        this.firstEventAt ??= performance.now();
      },
    };
  }
  commit(): void {
    this.committed = true;
    if (this.usage) this.ctx.usage = this.usage;
    if (this.firstTokenAt !== undefined) this.ctx.ttftMs ??= this.firstTokenAt - this.ctx.startedAt;
  }
}

export async function dispatch(ctx: GatewayContext, op: OperationName): Promise<void> {
  const targets = ctx.targets;
  if (targets.length === 0) throw new GatewayError(502, "UPSTREAM_ERROR", "No provider is available for this request");
  const health = healthOf(ctx.gateway);
  const stats = statsOf(ctx.gateway);
  const maxAttempts = Math.max(1, ctx.maxAttempts);
  let budget = maxAttempts;
  const skipped: Array<{ model: string; provider: string; reason: string }> = [];
  const givenUp = new Set<number>();
  let passedOver = 0; // targets the first pass could not try: open circuit, cannot serve the operation, given up
  let unsupported: GatewayError | undefined;
  let faulted: GatewayError | undefined; // the first endpoint given up for its configuration (endpointFault)
  let faults = 0; // their attempts, which use none of the budget: the endpoints left still get their retry
  let last: GatewayError | undefined;
  let hint: RetryHint | undefined; // made on the first failure: most requests have none
  let reopensInMs: number | undefined; // the soonest an endpoint skipped for its open circuit lets a request through

  // Targets in order; when every target was tried and attempts remain, a second pass retries them (after backoff).
  for (let pass = 0; ctx.attempts.length < budget; pass++) {
    let triedThisPass = false;
    for (let i = 0; i < targets.length && ctx.attempts.length < budget; i++) {
      if (givenUp.has(i)) continue;
      const target = targets[i]!;
      if (!unobserved(target, op) && !health.allow(target.modelId, target.provider, keyOwner(ctx, target), ctx)) {
        if (pass === 0) {
          skipped.push({ model: target.modelId, provider: target.provider, reason: "circuit_open" });
          passedOver++;
          const ms = health.retryInMs(target.modelId, target.provider, keyOwner(ctx, target));
          reopensInMs = Math.min(reopensInMs ?? ms, ms);
        }
        continue;
      }
      if (last) {
        if (ctx.gateway.draining) throw stopForShutdown(ctx, target, op, health);
        const wait = waitBefore(ctx, last, hint!.last(i));
        if (wait === null) {
          givenUp.add(i);
          if (pass === 0) passedOver++;
          if (!unobserved(target, op)) health.release(target.modelId, target.provider, keyOwner(ctx, target), ctx);
          continue;
        }
        if (wait && wait > 0) {
          try {
            await sleep(wait, undefined, { signal: ctx.signal });
          } catch {
            if (!unobserved(target, op)) health.release(target.modelId, target.provider, keyOwner(ctx, target), ctx);
            break;
          }
        }
        if (ctx.gateway.draining) throw stopForShutdown(ctx, target, op, health);
      }
      triedThisPass = true;
      try {
        if (await attempt(ctx, op, target, health, stats)) return;
      } catch (e) {
        if (e instanceof Unsupported) {
          unsupported ??= e.error;
          givenUp.add(i);
          if (pass === 0) passedOver++;
          continue;
        }
        const err = toGatewayError(e, ctx.signal);
        // The upstream had begun answering: no other endpoint is asked (it would be billed for the prompt again).
        if (answeredFailures.has(err)) throw finalError(ctx, err, skipped, hint);
        // A project's own key (BYOK) refused is the project's to fix: final, never served on the operator's keys. An
        // answer past the gateway's bounds is no refusal of the key: the next endpoint is tried, as on the gateway's.
        if (!ctx.signal.aborted && (!target.credentials || oversize(err)) && endpointFault(err)) {
          faulted ??= err;
          givenUp.add(i);
          faults++;
          budget++;
          if (pass === 0) passedOver++;
          warnEndpointFault(ctx, target, err);
          continue;
        }
        last = err;
        (hint ??= new RetryHint()).note(i, err, performance.now());
        if (ctx.signal.aborted || !isRetryable(err)) throw finalError(ctx, err, skipped, hint);
      }
    }
    // The attempts were counted for every target: one the first pass could not try hands its attempt to no retry of
    // another (an open circuit elsewhere is no reason to ask a failing endpoint again), but an endpoint left alone
    // still gets the one retry a lone target gets.
    if (pass === 0) budget = Math.max(maxAttempts - passedOver, Math.min(maxAttempts, 2)) + faults;
    if (!triedThisPass || ctx.signal.aborted) break;
  }
  if (!last) {
    // Nothing else could serve: the configuration fault, not to be retried by the client either (x-should-retry:
    // false). But an endpoint skipped for its open circuit lets a request through after its cooldown: then the
    // client is told when to retry, as when every endpoint's circuit is open.
    if (faulted && reopensInMs === undefined) throw finalError(ctx, faulted, skipped, hint);
    if (unsupported && !faulted) throw unsupported;
    throw circuitOpen(ctx, skipped, reopensInMs, faulted);
  }
  throw finalError(ctx, last, skipped, hint);
}

/**
 * The model's endpoints that were not given up all skipped for an open circuit. Retry-After: when the first of them
 * lets a probe through. Sooner, a client's retry meets the same refusal (the SDKs' own backoff, about a second, lands
 * inside a 30 s cooldown). `faulted`: an endpoint given up for its own fault on the way, named too.
 */
function circuitOpen(ctx: GatewayContext, skipped: unknown[], reopensInMs: number | undefined, faulted: GatewayError | undefined): GatewayError {
  const others = faulted ? "every other provider" : "every provider";
  const open = `${others} of ${ctx.model?.id ?? "this model"} is failing right now (circuit open); try again shortly`;
  return new GatewayError(502, "UPSTREAM_ERROR", faulted ? `${faulted.message}; ${open}` : open[0]!.toUpperCase() + open.slice(1), {
    details: faulted ? { ...faulted.details, attempts: ctx.attempts, skipped } : { skipped },
    retryAfter: reopensInMs === undefined ? undefined : reopensInMs / 1000,
  });
}

/**
 * Milliseconds to wait before the next attempt, null to give its endpoint up. An endpoint that failed before in this
 * request is judged on its own latest failure (its Retry-After, above the policy's maximum, gives it up), the wait
 * counted from that failure; one not yet tried follows the last failure of another (no wait, by default).
 */
function waitBefore(ctx: GatewayContext, last: GatewayError, own: Failure | undefined): number | null | undefined {
  if (!own) return ctx.retryDelay?.(last, ctx.attempts.length, { sameEndpoint: false });
  const wait = ctx.retryDelay?.(own.err, ctx.attempts.length, { sameEndpoint: true });
  return wait ? Math.max(0, wait - (performance.now() - own.at)) : wait;
}

/**
 * Once a shutdown has begun no retry or fallback starts (it could outlast the grace period, and the upstream call
 * would only be cut): the request ends with the shutdown's 503, which clients retry elsewhere.
 */
function stopForShutdown(ctx: GatewayContext, target: Target, op: OperationName, health: HealthRegistry): GatewayError {
  if (!unobserved(target, op)) health.release(target.modelId, target.provider, keyOwner(ctx, target), ctx);
  return shutdownError();
}

/**
 * Failures of streams whose upstream had begun answering before dispatch had their first event (a translator held
 * it): final, as a failure after the first event is — the request's answer, no other endpoint asked.
 */
const answeredFailures = new WeakSet<GatewayError>();

/** One upstream call. Resolves true when ctx.response is set; throws the attempt's error otherwise. */
async function attempt(ctx: GatewayContext, op: OperationName, target: Target, health: HealthRegistry, stats: StatsService): Promise<boolean> {
  const driver = ctx.drivers.get(target.provider) ?? (target.credentials ? byokDriver(ctx, target.provider) : undefined);
  const call = new AttemptCall(ctx);
  const t0 = performance.now();
  const record: ModelAttempt = { model: target.modelId, provider: target.provider, status: 0, latencyMs: 0 };
  noteAttemptTarget(record, target); // what the meter prices by (servedTarget), of several endpoints on one provider
  const span = ctx.trace?.attempt(ctx, target, ctx.targets.indexOf(target)); // only when tracing is on
  /** `e` is the attempt's failure as recorded and judged; `thrown`, when given, the error the request goes on with. */
  const fail = (e: unknown, thrown?: GatewayError): never => {
    // Cut by the request's own time limit: that timeout (what the driver threw at the abort is a 499).
    const limit = timeLimitCut(ctx.signal);
    const err = limit ?? toGatewayError(e, ctx.signal);
    const latency = performance.now() - t0;
    // Cut by the request's own abort, or refused for the client's own request: no failure of the provider's on the dashboard.
    const outcome = failedAttemptOutcome(err, ctx.signal.aborted && !limit);
    ctx.gateway.metrics.upstream.observe({ provider: target.provider, model: target.modelId, outcome }, latency / 1000);
    record.status = err.status;
    record.errorCode = err.code;
    record.latencyMs = round(latency);
    ctx.attempts.push(record);
    span?.failed(err);
    if (!unobserved(target, op)) judge(ctx, target, err, health, stats);
    throw thrown ?? err;
  };
  /** A stream whose upstream had begun answering failed before its first event reached dispatch. */
  const failAnswered = (err: GatewayError): never => {
    ctx.usage = call.usage ?? { inputTokens: 0, outputTokens: 0 };
    answeredFailures.add(err);
    // Judged as the same failure after the first event is (ObservedStream.failed); its error stays the client's.
    return fail(streamFailure(ctx, err), err);
  };
  let result: ProviderResult;
  try {
    // The config has no such provider (or no driver for it): another try finds it no more than this one did.
    if (!driver) throw configFault(`Provider "${target.provider}" is not configured`, { provider: target.provider, reason: "not_configured" });
    span?.bind(call.options); // the upstream request carries the attempt's traceparent
    const pending = ctx.invoke?.(ctx, driver, op, target, call.options) ?? invokeNative(driver, op, ctx.body, target, call.options);
    result = await pending;
  } catch (e) {
    if (e instanceof Unsupported) {
      span?.failed(e.error);
      if (!unobserved(target, op)) health.release(target.modelId, target.provider, keyOwner(ctx, target), ctx);
      throw e;
    }
    return fail(e);
  }

  let response: GatewayResponse;
  const named = namedProtocol(op);
  let upstreamModel: string | undefined;
  let end: number | undefined; // a stream's attempt ends at its first upstream event
  let observed: ObservedStream | undefined;
  if (result.kind === "stream") {
    // Peek the first event before committing: a stream that dies before it can still fall back silently.
    const it = result.events[Symbol.asyncIterator]();
    let first: IteratorResult<SseEvent>;
    try {
      first = await it.next();
      if (first.done) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${target.provider} sent an empty stream`, { retryable: true, details: { provider: target.provider } });
    } catch (e) {
      const err = toGatewayError(e, ctx.signal);
      // The client left while the stream's opening events were held: the upstream had begun answering, so its input
      // is spent. Its record (aborted) bills what it reported (message_start's usage), else the meter's estimate of
      // the input (for reported zeros), as it did when the opening events were the committed first event.
      if (ctx.signal.aborted && call.firstEventAt !== undefined) {
        ctx.usage = call.usage ?? { inputTokens: 0, outputTokens: 0 };
        ctx.streamLeftInHold = true;
      }
      // The upstream had begun answering (a token, a tool call) and a translator held it all (a Gemini function call
      // goes out whole): the stream failed after its first event though the client has no byte yet. Not asked again
      // (the upstream read the prompt); billed as a stream cut then is: what it reported, else the input's estimate.
      if (!ctx.signal.aborted && call.firstTokenAt !== undefined) return failAnswered(err);
      // Nothing reached the client yet: any upstream failure here may go elsewhere (streamFailure).
      return fail(streamFailure(ctx, err));
    }
    // The attempt's time ends at the upstream's first event, not at the end of a hold of its opening events.
    const firstEventAt = (end = call.firstEventAt ?? performance.now());
    // Every event that names the model names the gateway's id; the first one tells the upstream's own.
    const namer = named ? new StreamModelNamer(named, target.modelId) : undefined;
    const firstEvent = namer ? namer.rename(first.value) : first.value;
    upstreamModel = namer ? namer.upstreamModel : undefined;
    observed = observeStream(ctx, target, it, firstEvent, call, t0, firstEventAt, record, health, stats, namer);
    response = { kind: "stream", status: result.status ?? 200, events: observed };
    if (result.headers) Object.assign(ctx.responseHeaders, result.headers);
  } else {
    response = toResponse(ctx, result);
    if (named && response.kind === "json") upstreamModel = nameJsonModel(response.body, target.modelId, named);
  }
  const latency = (end ?? performance.now()) - t0;
  const upstream = ctx.gateway.metrics.upstream;
  // A stream's attempt is counted once it has ended, not as ok when its first event came: cut by the request's own
  // abort (the client left, a shutdown) it is cancelled, as a failed attempt would be; broken by the upstream after
  // that event (observeStream then gives the attempt its error code) an error; a guardrail's block says nothing about
  // the upstream. Its time is the time to that first event, or, broken or cut after it, the time until then.
  if (response.kind === "stream") ctx.onFinish(() => upstream.observe({ provider: target.provider, model: target.modelId, outcome: ctx.signal.aborted ? "cancelled" : observed?.failure ? failedAttemptOutcome(observed.failure, false) : record.errorCode ? "error" : "ok" }, (observed?.brokenAfterMs ?? latency) / 1000));
  else upstream.observe({ provider: target.provider, model: target.modelId, outcome: "ok" }, latency / 1000);
  record.status = result.status ?? 200;
  record.latencyMs = round(latency);
  ctx.attempts.push(record);
  ctx.resolvedProvider = target.provider;
  ctx.resolvedTarget = target;
  ctx.upstreamModel = upstreamModel ?? target.upstreamModel;
  ctx.responseHeaders[UPSTREAM_MODEL_HEADER] = ctx.upstreamModel;
  const served = ctx.config.models.get(target.modelId);
  if (served) ctx.model = served;
  call.commit();
  if (result.kind !== "stream") {
    if (!unobserved(target, op)) {
      health.record(target.modelId, target.provider, true, keyOwner(ctx, target));
      if (sharedStats(target)) stats.record({ model: target.modelId, provider: target.provider, ok: true });
    }
    // The metadata block was built before this attempt was pushed: rebuild it with the final attempt list.
    if (response.kind === "json") stampMetadata(ctx, response.body);
  }
  ctx.response = span ? span.succeeded(ctx, response, call) : response; // the span ends with this attempt's own usage
  return true;
}

/**
 * A stream's failure as its attempt is judged: any upstream failure is worth another try (another endpoint, if nothing
 * reached the client yet) and counts against its endpoint, but an event past the bounds or an account out of credit
 * (only another endpoint may serve: endpointFault, as after the same JSON answer), and a failure its decoder said
 * fails the same way again (x-should-retry: false: an in-band error about the request, a 400 as the same error sent
 * as a status is), which keeps that verdict: retried, it would only be billed and refused again. Before the first
 * event or after it alike: a request error says nothing about the endpoint wherever in the stream it came.
 */
function streamFailure(ctx: GatewayContext, err: GatewayError): GatewayError {
  const final = oversize(err) || err.details?.reason === OUT_OF_CREDIT || saysDoNotRetry(err);
  if (ctx.signal.aborted || final) return err;
  return new GatewayError(err.status === 499 ? 502 : err.status, err.code === "INTERNAL" || err.code === "CANCELLED" ? "UPSTREAM_ERROR" : err.code, err.message, {
    details: err.details, retryable: true, retryAfter: err.retryAfter, cause: err.cause ?? err,
  });
}

/**
 * Health and stats for a failed attempt: request errors (4xx other than 408/429) say nothing about the endpoint, and
 * its configuration faults are not outages (the circuit is for failures that pass: an operator fixes these).
 */
function judge(ctx: GatewayContext, target: Target, err: GatewayError, health: HealthRegistry, stats: StatsService): void {
  if (target.sandbox) return;
  // An attempt cut by the request's time limit is judged as the timeout it is; by any other abort, not at all.
  if ((ctx.signal.aborted && !timeLimitCut(ctx.signal)) || !isRetryable(err)) {
    health.release(target.modelId, target.provider, keyOwner(ctx, target), ctx);
    return;
  }
  health.record(target.modelId, target.provider, false, keyOwner(ctx, target));
  if (sharedStats(target)) stats.record({ model: target.modelId, provider: target.provider, ok: false });
}

/**
 * The committed stream: the peeked first event, then the rest; its end feeds health and live stats. A plain
 * iterator that can also be pushed (core/sse/push.ts) once the first event is out, so a slow stream parks no
 * promise here between frames.
 */
function observeStream(
  ctx: GatewayContext, target: Target, it: AsyncIterator<SseEvent>, first: SseEvent, call: AttemptCall, t0: number,
  firstEventAt: number, record: ModelAttempt, health: HealthRegistry, stats: StatsService, namer: StreamModelNamer | undefined,
): ObservedStream {
  return new ObservedStream(ctx, target, it, first, call, t0, firstEventAt, record, health, stats, namer);
}

class ObservedStream implements AsyncIterableIterator<SseEvent>, EventSink, PushControl {
  private finished = false;
  /** Set when the stream failed or was cut after its first event: the attempt's time runs until then. */
  brokenAfterMs: number | undefined;
  /** What the stream failed of after its first event, if it did. */
  failure: GatewayError | undefined;
  private sink: EventSink | undefined;
  private control: PushControl | undefined;
  constructor(
    private readonly ctx: GatewayContext, private readonly target: Target, private readonly it: AsyncIterator<SseEvent>,
    private first: SseEvent | undefined, private readonly call: AttemptCall, private readonly t0: number,
    private readonly firstEventAt: number, private readonly record: ModelAttempt, private readonly health: HealthRegistry,
    private readonly stats: StatsService, private readonly namer: StreamModelNamer | undefined,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<SseEvent>> {
    const first = this.first;
    if (first) {
      this.first = undefined;
      return { value: isErrorEvent(first) ? redactErrorEvent(first) : first, done: false };
    }
    if (this.finished) return { value: undefined, done: true };
    let step: IteratorResult<SseEvent>;
    try {
      step = await this.it.next();
    } catch (e) {
      throw this.failed(e);
    }
    if (step.done) this.succeeded();
    else {
      if (isErrorEvent(step.value)) redactErrorEvent(step.value);
      if (this.namer) {
        const ev = this.namer.rename(step.value);
        if (ev !== step.value) return { value: ev, done: false };
      }
    }
    return step;
  }

  async return(): Promise<IteratorResult<SseEvent>> {
    this.first = undefined;
    if (!this.finished) {
      // The client went away: no verdict on the endpoint; stop the upstream.
      this.stopped();
      await this.it.return?.().catch(() => {});
    }
    return { value: undefined, done: true };
  }

  [CAN_PUSH](): boolean {
    return this.first === undefined && !this.finished && canPush(this.it);
  }

  [PUSH](sink: EventSink): PushControl {
    this.sink = sink;
    this.control = (this.it as PushableIterator)[PUSH](this);
    return this;
  }

  onEvent(ev: SseEvent): void {
    const e = isErrorEvent(ev) ? redactErrorEvent(ev) : ev;
    this.sink!.onEvent(this.namer ? this.namer.rename(e) : e);
  }

  onEnd(): void {
    this.succeeded();
    this.sink!.onEnd();
  }

  onError(e: unknown): void {
    this.sink!.onError(this.failed(e));
  }

  pause(): void {
    this.control!.pause();
  }

  resume(): void {
    this.control!.resume();
  }

  cancel(): void {
    if (this.finished) return;
    this.stopped();
    this.control!.cancel();
  }

  /**
   * The reader stopped before the stream's end: no verdict on the endpoint. Cut by the request's own abort (the client
   * left, a shutdown), the attempt is CANCELLED, as one whose read failed with that abort is.
   */
  private stopped(): void {
    this.finished = true;
    this.health.release(this.target.modelId, this.target.provider, keyOwner(this.ctx, this.target), this.ctx);
    if (this.ctx.signal.aborted) {
      this.record.status = 499;
      this.record.errorCode = "CANCELLED";
      this.brokenOff();
    }
  }

  /** A stream that fails after its first event: its attempt lasted until now, not until that event (docs/routing.md). */
  private brokenOff(): void {
    this.brokenAfterMs = performance.now() - this.t0;
    this.record.latencyMs = round(this.brokenAfterMs);
  }

  private succeeded(): void {
    this.finished = true;
    const { target, call } = this;
    if (target.sandbox) return;
    const end = performance.now();
    const firstAt = call.firstTokenAt ?? this.firstEventAt;
    const out = call.usage?.outputTokens;
    const seconds = (end - firstAt) / 1000;
    this.health.record(target.modelId, target.provider, true, keyOwner(this.ctx, target));
    if (!sharedStats(target)) return;
    this.stats.record({
      model: target.modelId,
      provider: target.provider,
      ok: true,
      ttftMs: firstAt - this.t0,
      tokensPerSecond: out && out > 1 && seconds > 0 ? (out - 1) / seconds : undefined,
    });
  }

  private failed(e: unknown): GatewayError {
    this.finished = true;
    const err = toGatewayError(e, this.ctx.signal);
    this.record.status = err.status;
    this.record.errorCode = err.code;
    this.brokenOff();
    this.failure = err;
    // Judged as the same failure before the first event is: cut by the request's own abort (the client left while a
    // plugin's reader waited on the upstream), no verdict on the endpoint and a half-open probe's slot freed, as when
    // the reader stops (stopped()); the upstream's error about the client's own request (a prompt it refused after
    // some output) says nothing about the endpoint either, and opens no circuit for every other user of the model.
    judge(this.ctx, this.target, streamFailure(this.ctx, err), this.health, this.stats);
    return err;
  }
}

export function invokeNative(driver: ProviderDriver, op: OperationName, body: unknown, target: Target, call: CallOptions): Promise<ProviderResult> {
  // Without the transcoder a responses request reaches only an upstream that serves /responses itself, and a Gemini
  // one none at all: even its native pair picks the driver's op and reads the usage (the Gemini driver reports none).
  const fn = op === "responses" ? (target.nativeResponses ? driver.responses : undefined) : op === "gemini" ? undefined : driver[op];
  if (!fn) {
    // A provider that cannot serve this operation is passed over, not an error of the request (unless none can).
    throw new Unsupported(new GatewayError(400, "INVALID_REQUEST", `Provider "${driver.name}" (${driver.protocol}) does not support ${op} requests`, {
      details: { field: "model", provider: driver.name },
    }));
  }
  return fn.call(driver, body, target, call);
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** The gateway block every JSON result carries (providerMetadata.gateway). */
export function gatewayMetadata(ctx: GatewayContext) {
  return { generationId: ctx.generationId, resolvedProvider: ctx.resolvedProvider, upstreamModel: ctx.upstreamModel, modelAttempts: ctx.attempts };
}

function stampMetadata(ctx: GatewayContext, body: unknown): void {
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    const pm = (b.providerMetadata as Record<string, unknown> | undefined) ?? {};
    b.providerMetadata = { ...pm, gateway: gatewayMetadata(ctx) };
  }
}

function toResponse(ctx: GatewayContext, r: ProviderResult): GatewayResponse {
  if (r.headers) Object.assign(ctx.responseHeaders, r.headers);
  const status = r.status ?? 200;
  if (r.kind === "stream") return { kind: "stream", status, events: r.events };
  if (r.kind === "bytes") return { kind: "bytes", status, contentType: r.headers["content-type"] ?? "application/octet-stream", body: r.body };
  return { kind: "json", status, body: r.body };
}

/**
 * After the last attempt failed: 502 UPSTREAM_ERROR, or 504 UPSTREAM_TIMEOUT when every attempt timed out, with
 * every attempt (and every endpoint skipped for an open circuit) in details, and the Retry-After any attempt was
 * told (RetryHint), not only the last one's. A request error from the only attempt keeps its own status and code.
 */
function finalError(ctx: GatewayContext, err: GatewayError, skipped: unknown[], hint: RetryHint | undefined): GatewayError {
  const upstreamish = err.code === "UPSTREAM_ERROR" || err.code === "UPSTREAM_TIMEOUT";
  if (ctx.attempts.length <= 1 && !upstreamish && !skipped.length) return err;
  const allTimeouts = ctx.attempts.length > 0 && ctx.attempts.every((a) => a.errorCode === "UPSTREAM_TIMEOUT");
  const exhausted = ctx.attempts.length > 1 && isRetryable(err);
  const status = exhausted ? (allTimeouts ? 504 : 502) : err.status;
  const code = exhausted ? (allTimeouts ? "UPSTREAM_TIMEOUT" : "UPSTREAM_ERROR") : err.code;
  const message = exhausted ? `All ${ctx.attempts.length} attempts failed; last: ${err.message}` : err.message;
  return new GatewayError(status, code, message, {
    details: { ...err.details, attempts: ctx.attempts, ...(skipped.length ? { skipped } : {}) },
    // A request error would fail again whenever it is retried: only its own hint, if any.
    retryAfter: isRetryable(err) && hint ? hint.seconds(performance.now()) : err.retryAfter,
    headers: err.headers,
    cause: err.cause,
    type: err.type,
  });
}
