// Bedrock's errors (reference §2.6, §2.4): an HTTP error is `{"message"}` with the type in `x-amzn-errortype`
// (`ThrottlingException:http://…`) or a `__type` field; inside a stream it is an `exception` frame named by
// `:exception-type`. Both map with the same rules as every upstream (providers/http.ts): ValidationException (400)
// is the caller's → 400 INVALID_REQUEST with Bedrock's message; throttling, not-ready and 5xx are retryable
// (fallback); access and signature errors are the gateway's configuration (502, not retried); a 404
// ResourceNotFoundException (the configured model id) is 502 and falls back to the model's next endpoint.
import { DO_NOT_RETRY, GatewayError } from "../../core/errors.ts";
import { readTextPrefix, upstreamError, type UpstreamResponse } from "../http.ts";
import { EVENT_TOO_LARGE, isRetryableStatus, UPSTREAM_NOT_FOUND } from "../../core/retryable-status.ts";
import { LIMIT_SETTING } from "../upstream-limits.ts";
import { overflowDetails } from "../context-overflow.ts";
import { UPSTREAM_REQUEST_ID_HEADER, withUpstreamRequestId } from "../upstream-request-id.ts";
import { EventStreamFrameTooLargeError, type BedrockFrame } from "./eventstream.ts";

function header(h: UpstreamResponse["headers"], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `ThrottlingException:http://internal.amazon.com/…` or `com.amazon…#ThrottlingException` -> `ThrottlingException`. */
export function errorTypeOf(headers: UpstreamResponse["headers"], body: unknown): string | undefined {
  const raw = header(headers, "x-amzn-errortype") ?? (typeof (body as any)?.__type === "string" ? (body as any).__type : undefined);
  if (!raw) return undefined;
  const t = raw.split(":")[0]!;
  return t.slice(t.lastIndexOf("#") + 1) || undefined;
}

/**
 * Types that are worth another try whatever status carries them (ModelNotReady is retried by the AWS SDK;
 * ModelErrorException, a 424, is the model failing on the request: a server error, protocols-2 §2.6).
 */
const RETRYABLE_TYPES = new Set(["ThrottlingException", "ModelNotReadyException", "ServiceUnavailableException", "InternalServerException", "ModelTimeoutException", "ModelErrorException"]);

/**
 * Whether a model error (HTTP ModelErrorException, a stream's modelStreamErrorException) passes on the model's own
 * refusal of the request (`originalStatusCode`: "Received client error (400) ... input malformed"): a 4xx other than
 * the model timing out or busy (408, 429: worth another try). One rule for both paths, so they cannot disagree.
 */
function modelRefusedRequest(body: unknown): boolean {
  const original = (body as { originalStatusCode?: unknown } | undefined)?.originalStatusCode;
  return typeof original === "number" && original >= 400 && original < 500 && !isRetryableStatus(original);
}

export function bedrockError(provider: string, status: number, headers: UpstreamResponse["headers"], text: string): GatewayError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch { /* not JSON */ }
  const type = errorTypeOf(headers, body);
  // A ModelErrorException passing on the model's refusal of the request is the client's 400, neither retried nor
  // counted against the endpoint.
  const requestFault = type === "ModelErrorException" && modelRefusedRequest(body);
  const base = upstreamError(provider, requestFault ? 400 : status, headers, text);
  if (!type) return base;
  // Both generic messages put the provider's text after their first ": "; the type goes just before it.
  const named = base.message.replace(": ", `: ${type}: `);
  const message = requestFault ? named.replace("(HTTP 400)", `(HTTP ${status})`) : named;
  // A 404 ResourceNotFoundException is the model id in gateway.yaml (or its access): not retried, but the next
  // endpoint may serve it (core/dispatch.ts endpointFault).
  const notFound = status === 404 && type === "ResourceNotFoundException";
  const retryable = base.retryable || (RETRYABLE_TYPES.has(type) && !requestFault);
  return new GatewayError(base.status, base.code, message, {
    details: { ...base.details, upstream_status: status, upstream_error_type: type, ...(notFound ? { reason: UPSTREAM_NOT_FOUND } : {}) },
    retryable,
    retryAfter: base.retryAfter,
    // x-should-retry: false goes with a verdict of not retryable; the upstream's id stays either way.
    headers: retryable ? withUpstreamRequestId(undefined, base.headers?.[UPSTREAM_REQUEST_ID_HEADER]) : base.headers,
  });
}

export async function bedrockFailure(provider: string, res: UpstreamResponse): Promise<GatewayError> {
  return bedrockError(provider, res.status, res.headers, await readTextPrefix(res));
}

/** An `exception` / `error` frame inside a stream -> the gateway error (the client's protocol error event). */
export function streamFrameError(provider: string, frame: BedrockFrame): GatewayError {
  let payload: any;
  try {
    payload = frame.payload ? JSON.parse(frame.payload) : undefined;
  } catch { /* keep the text */ }
  const type = frame.type || frame.messageType;
  const message: string = payload?.message ?? payload?.Message ?? frame.errorMessage ?? type;
  const details = { provider, upstream_error_type: type, upstream_error: payload ?? frame.payload };
  const t = type.toLowerCase();
  // A modelStreamErrorException passing on the model's refusal of the request is the client's 400, as the same
  // ModelErrorException sent as an HTTP status is; after the first event, it says nothing about the endpoint either.
  if (t === "validationexception" || (t === "modelstreamerrorexception" && modelRefusedRequest(payload))) {
    // A prompt past the window ("Input is too long for requested model.") is marked so as every upstream's is.
    return new GatewayError(400, "INVALID_REQUEST", `Provider ${provider} rejected the request: ${type}: ${message}`, {
      retryable: false, details: { ...details, ...overflowDetails(400, payload, String(message)) }, headers: DO_NOT_RETRY,
    });
  }
  const timeout = t === "modeltimeoutexception";
  const retryable = t === "throttlingexception" || t === "serviceunavailableexception" || t === "internalserverexception" || t === "modelstreamerrorexception" || timeout;
  return new GatewayError(timeout ? 504 : 502, timeout ? "UPSTREAM_TIMEOUT" : "UPSTREAM_ERROR", `Provider ${provider} failed mid-stream: ${type}: ${message}`, { retryable, details });
}

/**
 * A frame that fails its CRC or length check: the stream is corrupt, worth another try elsewhere before it starts.
 * A well-formed frame past the event bound is not: it is event_too_large, as an SSE event past it (providers/http.ts),
 * since asked again the provider would generate, and bill, as large an answer.
 */
export function framingError(provider: string, err: Error): GatewayError {
  if (err instanceof EventStreamFrameTooLargeError) return frameTooLarge(provider, err);
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent a corrupt event stream: ${err.message}`, {
    retryable: true, details: { provider, reason: "eventstream" }, cause: err,
  });
}

/** 502 event_too_large naming the bound and the setting that raises it; not retried (core/dispatch.ts endpointFault). */
function frameTooLarge(provider: string, err: EventStreamFrameTooLargeError): GatewayError {
  const setting = LIMIT_SETTING.eventChars;
  return new GatewayError(502, "UPSTREAM_ERROR",
    `Provider ${provider} sent an event-stream frame of ${err.length} bytes, past the gateway's bound of ${err.limit} for one stream event (${setting} raises it); the stream was stopped`, {
      retryable: false, headers: DO_NOT_RETRY, details: { provider, reason: EVENT_TOO_LARGE, limit_chars: err.limit, frame_bytes: err.length, setting }, cause: err,
    });
}
