// Upstream HTTP plumbing shared by every network provider: keep-alive undici pools per origin, created once,
// and the mapping of transport failures and upstream error statuses onto the gateway's error codes.
import type { Readable } from "node:stream";
import { Pool, errors as undiciErrors, type Dispatcher } from "undici";
import { DO_NOT_RETRY, GatewayError, clientClosed } from "../core/errors.ts";
import { withTraceHeaders } from "../core/observability/trace-headers.ts";
import { upstreamSignal } from "../core/net/request-abort.ts";
import { rememberSentCredentials } from "../core/secrets/registry.ts";
import { SseEventTooLargeError, limitEvents } from "../core/sse/parse.ts";
import { armAnswerDeadline } from "../core/net/answer-deadline.ts";
import { parseAnswer, stripBom } from "./answer-check.ts";
import { decodeBody } from "./decode-body.ts";
import { ANSWER_TOO_LARGE, EVENT_TOO_LARGE, OUT_OF_CREDIT, UPSTREAM_NOT_FOUND, isRetryableStatus } from "../core/retryable-status.ts";
import { isOutOfCredit } from "./out-of-credit.ts";
import { isGoogleSetupFault } from "./google-setup-fault.ts";
import { overflowDetails } from "./context-overflow.ts";
import { UpstreamWatch } from "./upstream-watch.ts";
import type { UpstreamLimitsConfig } from "../core/generated/types/gateway.ts";
import { DEFAULT_UPSTREAM_LIMITS, LIMIT_SETTING, upstreamLimits, type AnswerKind, type UpstreamLimits } from "./upstream-limits.ts";
import { proxyFor, type EgressProxy, type ProxyRoute } from "../core/net/egress-proxy.ts";
import { proxiedPool, proxyOfBreak, throughProxy, watchProxiedBody } from "./egress-pool.ts";
import { upstreamRequestId, withUpstreamRequestId } from "./upstream-request-id.ts";

export { MAX_ANSWER_BYTES, MAX_MEDIA_ANSWER_BYTES } from "./upstream-limits.ts";

export interface UpstreamRequest {
  url: string;
  method?: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData["body"];
  /** The bounds its body is read within (server.upstream_limits); absent: the defaults. */
  limits?: UpstreamLimits;
}

export class UpstreamClient {
  private readonly pools = new Map<string, Dispatcher>();
  /** Origins reached through the egress proxy, and which: only read when a call fails. */
  private readonly proxied = new Map<string, ProxyRoute>();
  private readonly urls = new Map<string, { origin: string; path: string }>();
  /** server.upstream_limits: how much of an answer is read. */
  readonly limits: UpstreamLimits;

  /**
   * `origins` get their pools at once (boot), others on first use (BYOK base URLs). `timeoutMs`: for the response
   * headers and between reads; `answerTimeoutMs` (never shorter than timeoutMs): from the send, for a JSON answer's
   * whole body and a stream's first event (core/net/answer-deadline.ts). `limits`: server.upstream_limits.
   * `egress`: the egress proxy (server.egress_proxy or HTTPS_PROXY...), decided once per origin as its pool is made.
   */
  constructor(
    readonly provider: string,
    private readonly opts: { connections?: number; timeoutMs: number; answerTimeoutMs?: number; origins?: string[]; limits?: UpstreamLimitsConfig; egress?: EgressProxy },
  ) {
    this.limits = upstreamLimits(opts.limits);
    for (const o of opts.origins ?? []) this.pool(new URL(o).origin);
  }

  private pool(origin: string): Dispatcher {
    let p = this.pools.get(origin);
    if (!p) {
      const connections = this.opts.connections ?? 128;
      const route = proxyFor(this.opts.egress, origin);
      if (route) this.proxied.set(origin, route);
      p = route
        ? proxiedPool(origin, route, { connections, keepAliveTimeout: 30_000, timeoutMs: this.opts.timeoutMs })
        : new Pool(origin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
      this.pools.set(origin, p);
    }
    return p;
  }

  /** Origin and path of an upstream URL: parsed once per URL (a provider uses a handful), not on every request. */
  private split(href: string): { origin: string; path: string } {
    let u = this.urls.get(href);
    if (!u) {
      const url = new URL(href);
      u = { origin: url.origin, path: url.pathname + url.search };
      if (this.urls.size >= 1000) this.urls.clear(); // BYOK base URLs are per request: keep it bounded
      this.urls.set(href, u);
    }
    return u;
  }

  /** Send one request; transport failures become UPSTREAM_ERROR / UPSTREAM_TIMEOUT (retryable). */
  async send(req: UpstreamRequest, signal: AbortSignal, timeoutMs = this.opts.timeoutMs): Promise<UpstreamResponse> {
    const url = this.split(req.url);
    rememberSentCredentials(req.headers); // so an upstream that echoes them has them masked (core/secrets)
    let headers = withTraceHeaders(req.headers, signal); // unchanged unless tracing is on
    // No Accept-Encoding would let the upstream pick any coding (RFC 9110 §12.5.3): ask for none. One sent anyway
    // (or asked for by a configured header) is decoded (decodeBody).
    if (!hasHeader(headers, "accept-encoding")) headers = { ...headers, "accept-encoding": "identity" };
    let body: UpstreamRequest["body"] | Iterable<Uint8Array> = req.body;
    if (body !== undefined && body.length >= RELEASE_BODY_FROM) {
      const bytes = typeof body === "string" ? Buffer.from(body) : body;
      headers = { ...headers, "content-length": String(bytes.byteLength) };
      body = sendOnce(bytes);
    }
    const sentAt = Date.now();
    // timeoutMs on the gateway's clock (providers/upstream-watch.ts), which also forwards the request's abort from its
    // cheap emitter (core/net/request-abort.ts). undici's own timers tick every ~0.5 s and fire anywhere from half a
    // second early to a second late: kept as a backstop, a second past the bound, so they never cut a call first.
    const watch = new UpstreamWatch(upstreamSignal(signal), timeoutMs, upstreamTimeout, this.provider);
    try {
      const r = await cutWhileConnecting(this.pool(url.origin).request({
        path: url.path,
        method: req.method ?? "POST",
        headers,
        body: body as Dispatcher.DispatchOptions["body"], // iterables are a documented body; the request() types omit them
        signal: watch,
        headersTimeout: timeoutMs + BACKSTOP_MS,
        bodyTimeout: timeoutMs + BACKSTOP_MS,
      }), watch);
      watch.watchBody(r.body); // the bytes as they arrive, before any decoding
      if (this.proxied.size) {
        const route = this.proxied.get(url.origin);
        if (route) watchProxiedBody(r.body, route, url.origin); // a tunnel dropped mid-answer names the proxy
      }
      const answer = decodeBody(this.provider, r.body, header(r.headers, "content-encoding"));
      const answerMs = Math.max(this.opts.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS, timeoutMs);
      // Media types are case-insensitive (RFC 9110 §8.3.1): `Text/Event-Stream` is a stream too.
      const type = (header(r.headers, "content-type") ?? "").toLowerCase();
      // A stream (SSE, or Bedrock's binary event stream) is bounded until its reader parses the first event.
      const streamed = type.includes("text/event-stream") || type.includes("amazon.eventstream");
      armAnswerDeadline(answer, answerMs - (Date.now() - sentAt), () => answerTimeout(this.provider, answerMs), streamed);
      if (this.limits.eventChars !== DEFAULT_UPSTREAM_LIMITS.eventChars) limitEvents(answer, this.limits.eventChars);
      return { status: r.statusCode, headers: r.headers, body: answer, limits: this.limits };
    } catch (err) {
      watch.stop();
      const failure = transportError(this.provider, err, signal);
      const route = this.proxied.size ? this.proxied.get(url.origin) : undefined;
      throw route ? throughProxy(failure, this.provider, route, url.origin, timeoutMs) : failure;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => {})));
    this.pools.clear();
  }
}

/**
 * The call's answer, or its watch's reason (timeout_ms passed, the client left) as soon as the watch fires. undici
 * acts on a signal only once the call has its connection: one waiting for it (a CONNECT the egress proxy leaves
 * unanswered) ran on to the tunnel's own backstop, a second and a half late, failing as UND_ERR_HEADERS_TIMEOUT.
 * undici still ends that call when its connection comes or fails; an answer arriving after the cut is let go.
 */
function cutWhileConnecting(pending: Promise<Dispatcher.ResponseData>, watch: UpstreamWatch): Promise<Dispatcher.ResponseData> {
  if (watch.aborted) {
    pending.then((r) => releaseBody(r.body, false), ignore);
    return Promise.reject(watch.reason);
  }
  return new Promise((resolve, reject) => {
    let cut = false;
    const onCut = () => {
      cut = true;
      reject(watch.reason);
    };
    watch.on("abort", onCut);
    pending.then((r) => {
      watch.removeListener("abort", onCut);
      if (cut) releaseBody(r.body, false);
      else resolve(r);
    }, (err) => {
      watch.removeListener("abort", onCut);
      reject(err);
    });
  });
}

/** How far past timeoutMs undici's coarse timers are set: they may fire up to ~0.5 s before their delay. */
const BACKSTOP_MS = 1000;

/** server.upstream_answer_timeout_ms's default (schemas/gateway.schema.json). */
export const DEFAULT_ANSWER_TIMEOUT_MS = 600_000;

/** No response headers, or no data between chunks, within the provider's timeout_ms (providers/upstream-watch.ts). */
function upstreamTimeout(phase: "headers" | "body", ms: number, provider: string): GatewayError {
  const what = phase === "headers" ? "did not respond" : "sent nothing more";
  return new GatewayError(504, "UPSTREAM_TIMEOUT", `Provider ${provider} ${what} within ${ms} ms`, {
    retryable: true, details: { provider, reason: `${phase}_timeout`, timeout_ms: ms },
  });
}

function answerTimeout(provider: string, ms: number): GatewayError {
  return new GatewayError(504, "UPSTREAM_TIMEOUT", `Provider ${provider} did not answer within ${ms} ms`, {
    retryable: true, details: { provider, reason: "answer_timeout", timeout_ms: ms },
  });
}

/**
 * Bodies from this size on reach undici as a one-shot iterable. undici keeps a string or Buffer body for the whole
 * request (its Request and abort closure hold it): for a stream, the stream's whole life, one more copy of a long
 * chat's prompt per open stream. Iterated, it is released once written. Smaller bodies are sent as they are: the
 * iterable path costs a few promises per request.
 */
const RELEASE_BODY_FROM = 16 * 1024;

function* sendOnce(bytes: Uint8Array): Generator<Uint8Array> {
  yield bytes;
}

export function transportError(provider: string, err: unknown, signal?: AbortSignal): GatewayError {
  if (err instanceof GatewayError) return err;
  if (signal?.aborted) return clientClosed(err);
  if (err instanceof SseEventTooLargeError) {
    const setting = LIMIT_SETTING.eventChars;
    return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent a stream event larger than ${err.limit} characters, the gateway's bound (${setting} raises it); the stream was stopped`, {
      retryable: false, headers: DO_NOT_RETRY, details: { provider, reason: EVENT_TOO_LARGE, limit_chars: err.limit, setting }, cause: err,
    });
  }
  const e = err as { code?: string; message?: string };
  const timeout = err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError
    || err instanceof undiciErrors.ConnectTimeoutError || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT";
  if (timeout) {
    return new GatewayError(504, "UPSTREAM_TIMEOUT", `Provider ${provider} did not respond in time`, {
      retryable: true, details: { provider, reason: e.code ?? "timeout" }, cause: err,
    });
  }
  const failure = new GatewayError(502, "UPSTREAM_ERROR", `Could not reach provider ${provider}: ${e.message ?? String(err)}`, {
    retryable: true, details: { provider, reason: e.code ?? "network" }, cause: err,
  });
  // A body that broke off through the egress proxy (its tunnel dropped mid-stream) names the proxy.
  const via = proxyOfBreak(err);
  return via ? throughProxy(failure, provider, via.route, via.origin, 0) : failure;
}

/** Whether `headers` has `name` (lower case), in any case. */
function hasHeader(headers: Record<string, string>, name: string): boolean {
  if (headers[name] !== undefined) return true;
  for (const k in headers) if (k.length === name.length && k.toLowerCase() === name) return true;
  return false;
}

function header(headers: UpstreamResponse["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Seconds from retry-after-ms / retry-after (seconds or HTTP date). */
export function retryAfterSeconds(headers: UpstreamResponse["headers"]): number | undefined {
  const ms = Number(header(headers, "retry-after-ms"));
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const ra = header(headers, "retry-after");
  if (!ra) return undefined;
  const s = Number(ra);
  if (Number.isFinite(s)) return Math.max(0, s);
  const at = Date.parse(ra);
  return Number.isFinite(at) ? Math.max(0, (at - Date.now()) / 1000) : undefined;
}

/**
 * Whether a 404 is about what the gateway chose for this endpoint (gateway.yaml), never named by the client: the
 * upstream model or Azure deployment, or the URL Azure's api_version makes. Azure's DeploymentNotFound and its bare
 * "Resource not found", OpenAI's model_not_found, Anthropic's not_found_error on `model:`, Gemini's and Vertex's
 * NOT_FOUND for a model. The next endpoint of the model may well have it.
 */
export function isUpstreamNotFound(status: number, parsed: unknown): boolean {
  if (status !== 404) return false;
  const e = (parsed as { error?: { code?: unknown; type?: unknown; status?: unknown; message?: unknown } } | undefined)?.error;
  if (!e || typeof e !== "object") return false;
  const message = typeof e.message === "string" ? e.message : "";
  if (e.code === "DeploymentNotFound" || e.code === "model_not_found") return true;
  if (String(e.code) === "404" && /^Resource not found\b/i.test(message)) return true;
  if (e.type === "not_found_error" && /^model:/i.test(message)) return true;
  return e.status === "NOT_FOUND" && /^(models\/\S+ is not found|Publisher Model `[^`]*` was not found)/i.test(message);
}

/**
 * Whether the provider said the *request* is wrong (the caller's fault, never worth a retry): 400, 413, 422, and
 * 404 when the provider names what was not found and the client named it (a file, a response, a batch). A 404
 * about the endpoint's own model or deployment (isUpstreamNotFound), or without an error body of the provider's own
 * (a wrong base_url, OpenAI's `unknown_url`), is the gateway's configuration, not the caller; so is Google's 400 for
 * an invalid API key or a project it will not serve (isGoogleSetupFault).
 */
export function isRequestError(status: number, parsed: unknown): boolean {
  if (status === 400 && isGoogleSetupFault(parsed)) return false;
  if (status === 400 || status === 413 || status === 422) return true;
  if (status !== 404 || isUpstreamNotFound(status, parsed)) return false;
  const e = (parsed as { error?: { code?: unknown; type?: unknown; message?: unknown } } | undefined)?.error;
  return typeof e?.message === "string" && e.code !== "unknown_url";
}

/**
 * Azure's content filter refusing a prompt (protocols-2 §4.4: 400, error.code content_filter, the categories in
 * innererror.content_filter_result). The error code list has no place for it, so the 400 INVALID_REQUEST says it
 * in details.reason, which every client protocol's envelope carries.
 */
function contentFilterDetails(status: number, p: any): Record<string, unknown> {
  if (status !== 400 || p?.error?.code !== "content_filter") return {};
  const result = p.error.innererror?.content_filter_result;
  return { reason: "content_filter", ...(result && typeof result === "object" ? { content_filter_result: result } : {}) };
}

/**
 * An upstream's non-2xx answer as the gateway's error (docs/routing.md, "Upstream errors"):
 * - a request error (see isRequestError) → 400 INVALID_REQUEST with the provider's message, so every SDK raises
 *   its bad-request class and none retries (a content-filter refusal marked details.reason content_filter, a context
 *   overflow context_length_exceeded);
 * - a 404 about the endpoint's own model or deployment (isUpstreamNotFound) → 502 UPSTREAM_ERROR with
 *   details.reason upstream_not_found, which falls back to the model's next endpoint;
 * - an account out of credit said with a retryable status (OpenAI's 429 insufficient_quota: isOutOfCredit) → 502
 *   UPSTREAM_ERROR with details.reason out_of_credit, not retried (no wait helps), as a 402 is;
 * - 408 / 504 → 504 UPSTREAM_TIMEOUT; anything else (the provider's 401/403 on the gateway's own credentials,
 *   Google's 400 API_KEY_INVALID or FAILED_PRECONDITION, 429, 5xx, ...) → 502 UPSTREAM_ERROR. 408, 409, 429 and 5xx are retryable (fallback); the rest tell the SDKs
 *   not to retry (x-should-retry: false).
 * The provider's status and error object are in details either way; its own id for the call in the answer's
 * x-mg-upstream-request-id (providers/upstream-request-id.ts).
 */
export function upstreamError(provider: string, status: number, headers: UpstreamResponse["headers"], text: string): GatewayError {
  const id = upstreamRequestId(headers);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(stripBom(text));
  } catch { /* non-JSON body: keep the text */ }
  const p = parsed as any;
  const message: string =
    (typeof p?.error?.message === "string" && p.error.message) ||
    (typeof p?.message === "string" && p.message) ||
    (typeof p?.[0]?.error?.message === "string" && p[0].error.message) ||
    (typeof text === "string" && text.slice(0, 500)) || `HTTP ${status}`;
  const details = { provider, upstream_status: status, upstream_error: p?.error ?? p };
  if (isRequestError(status, parsed)) {
    return new GatewayError(400, "INVALID_REQUEST", `Provider ${provider} rejected the request (HTTP ${status}): ${message}`, {
      retryable: false,
      headers: withUpstreamRequestId(DO_NOT_RETRY, id),
      details: { ...details, ...(typeof p?.error?.param === "string" ? { field: p.error.param } : {}), ...contentFilterDetails(status, p), ...overflowDetails(status, p?.error ?? p?.[0]?.error ?? p, message) },
    });
  }
  if (isUpstreamNotFound(status, parsed)) {
    return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} returned HTTP ${status} for the model or deployment configured in gateway.yaml: ${message}`, {
      retryable: false,
      headers: withUpstreamRequestId(DO_NOT_RETRY, id),
      details: { ...details, reason: UPSTREAM_NOT_FOUND },
    });
  }
  if (isRetryableStatus(status) && isOutOfCredit(p?.error)) {
    return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} returned HTTP ${status}, its account out of credit or over its spending cap: ${message}`, {
      retryable: false,
      headers: withUpstreamRequestId(DO_NOT_RETRY, id),
      details: { ...details, reason: OUT_OF_CREDIT },
    });
  }
  const retryable = isRetryableStatus(status);
  const timeout = status === 408 || status === 504;
  return new GatewayError(timeout ? 504 : 502, timeout ? "UPSTREAM_TIMEOUT" : "UPSTREAM_ERROR", `Provider ${provider} returned HTTP ${status}: ${message}`, {
    retryable,
    retryAfter: retryAfterSeconds(headers),
    headers: withUpstreamRequestId(retryable ? undefined : DO_NOT_RETRY, id),
    details,
  });
}

/** Read an upstream's error body (bounded) and turn it into a GatewayError. */
export async function failFromResponse(provider: string, res: UpstreamResponse): Promise<GatewayError> {
  return upstreamError(provider, res.status, res.headers, await readTextPrefix(res));
}

/** Most bytes of an error answer kept for its message; the rest is not read. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * An answer past its bound: the same request would be as large (generated and billed again), so neither the gateway
 * (core/dispatch.ts: that endpoint is given up, the next one tried) nor the client retries it; only the setting helps.
 */
export function answerTooLarge(provider: string, kind: AnswerKind, limit: number): GatewayError {
  const setting = LIMIT_SETTING[kind];
  const what = kind === "download" ? "a file to download" : "an answer";
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent ${what} larger than ${limit} bytes, the gateway's bound (${setting} raises it); the answer was dropped`, {
    retryable: false, headers: DO_NOT_RETRY, details: { provider, reason: ANSWER_TOO_LARGE, limit_bytes: limit, setting },
  });
}

/**
 * An upstream body read to its end, never more than the response's bound for its `kind` (server.upstream_limits):
 * past it (or a Content-Length above it) the body is destroyed, which drops the connection, and the answer is a 502.
 * Transport failures are mapped as on send().
 */
export async function readUpstreamBody(provider: string, res: UpstreamResponse, kind: AnswerKind, signal?: AbortSignal): Promise<Buffer> {
  const limit = (res.limits ?? DEFAULT_UPSTREAM_LIMITS)[kind];
  const declared = Number(header(res.headers, "content-length"));
  if (declared > limit) {
    releaseBody(res.body, false);
    throw answerTooLarge(provider, kind, limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop by a throw destroys the body (the async iterator's return).
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > limit) throw answerTooLarge(provider, kind, limit);
      chunks.push(chunk);
    }
  } catch (err) {
    throw transportError(provider, err, signal);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * An upstream's JSON answer, bounded (see readUpstreamBody; media operations pass "media") and checked
 * (providers/answer-check.ts): a body that is not JSON, too deep, or an error envelope sent as a success is a
 * retryable 502, never an answer.
 */
export async function readUpstreamJson(provider: string, res: UpstreamResponse, signal?: AbortSignal, kind: "answer" | "media" = "answer"): Promise<any> {
  const bytes = await readUpstreamBody(provider, res, kind, signal);
  return parseAnswer(provider, res.status, header(res.headers, "content-type"), bytes.toString("utf8"));
}

/** The first `limit` bytes of a body (an error's, for its message) as text; the rest is not read and the body is let go. "" if unreadable. */
export async function readTextPrefix(res: UpstreamResponse, limit = MAX_ERROR_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break; // leaving the loop destroys the rest
    }
  } catch { /* body unreadable: the status says enough */ }
  return Buffer.concat(chunks, size).subarray(0, limit).toString("utf8");
}

function ignore(): void {}

/**
 * Lets go of an upstream body the relay is done with. A late reset, or the AbortError undici emits when the body is
 * destroyed, must not become an uncaught error; a body read to its end is drained so the connection can be reused.
 */
export function releaseBody(readable: Readable | undefined, readToEnd: boolean): void {
  if (!readable || readable.destroyed) return;
  readable.on("error", ignore);
  if (readToEnd) readable.resume();
  else readable.destroy();
}
