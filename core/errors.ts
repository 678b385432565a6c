// One error type and one catalogue of codes (the spec's Errors table). Nothing else writes error bodies.
import { redact, redactDeep } from "./secrets/registry.ts";
import { anthropicOverflowMessage, CONTEXT_LENGTH_EXCEEDED, isContextOverflow, overflowParam, type OverflowFigures } from "./context-overflow.ts";

export type ErrorCode =
  | "INVALID_REQUEST"
  | "BAD_REQUEST"
  | "INVALID_API_KEY"
  | "EXPIRED_API_KEY"
  | "UNAUTHORIZED"
  | "BUDGET_EXCEEDED"
  | "MODEL_NOT_ALLOWED"
  | "FORBIDDEN"
  | "MODEL_NOT_FOUND"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "RATE_LIMITED"
  | "INTERNAL"
  | "UPSTREAM_ERROR"
  | "UPSTREAM_TIMEOUT"
  | "STORE_UNAVAILABLE"
  | "GUARDRAIL_BLOCKED"
  | "GUARDRAIL_UNAVAILABLE"
  /** The client went away (499): recorded in the logs and the ledger, seldom seen by anyone. */
  | "CANCELLED";

/** OpenAI-style `type` per code, so the official SDKs classify errors the way they classify OpenAI's. */
const OPENAI_TYPE: Record<ErrorCode, string> = {
  INVALID_REQUEST: "invalid_request_error",
  BAD_REQUEST: "invalid_request_error",
  INVALID_API_KEY: "authentication_error",
  EXPIRED_API_KEY: "authentication_error",
  UNAUTHORIZED: "authentication_error",
  BUDGET_EXCEEDED: "insufficient_quota",
  MODEL_NOT_ALLOWED: "permission_error",
  FORBIDDEN: "permission_error",
  MODEL_NOT_FOUND: "not_found_error",
  NOT_FOUND: "not_found_error",
  CONFLICT: "conflict_error",
  PAYLOAD_TOO_LARGE: "invalid_request_error",
  UNSUPPORTED_MEDIA_TYPE: "invalid_request_error",
  RATE_LIMITED: "rate_limit_error",
  INTERNAL: "server_error",
  UPSTREAM_ERROR: "upstream_error",
  UPSTREAM_TIMEOUT: "timeout_error",
  STORE_UNAVAILABLE: "service_unavailable_error",
  GUARDRAIL_BLOCKED: "invalid_request_error",
  GUARDRAIL_UNAVAILABLE: "server_error",
  CANCELLED: "cancelled",
};

/** Anthropic `error.type` by HTTP status (reference 2.6), so the Anthropic SDK raises the right class. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 402: return "billing_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 408:
    case 504: return "timeout_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/** google.rpc.Code name by HTTP status: the Gemini API's `error.status`, which the Gemini SDKs and CLI read. */
export function googleStatus(status: number): string {
  switch (status) {
    case 400: case 413: case 415: case 422: case 431: return "INVALID_ARGUMENT";
    case 401: return "UNAUTHENTICATED";
    case 402: case 429: return "RESOURCE_EXHAUSTED";
    case 403: return "PERMISSION_DENIED";
    case 404: return "NOT_FOUND";
    case 405: case 501: return "UNIMPLEMENTED";
    case 408: case 504: return "DEADLINE_EXCEEDED";
    case 409: return "ABORTED";
    case 499: return "CANCELLED";
    case 502: case 503: return "UNAVAILABLE";
    default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

const RPC = "type.googleapis.com/google.rpc.";

/** The header the openai and Anthropic SDKs obey over the status: this failure would fail the same way again. */
export const DO_NOT_RETRY: Readonly<Record<string, string>> = Object.freeze({ "x-should-retry": "false" });

/** Did the gateway tell the client not to retry (x-should-retry: false)? */
export const saysDoNotRetry = (err: GatewayError): boolean => err.headers?.["x-should-retry"] === "false";

/**
 * The HTTP status a Gemini-protocol client gets. @google/genai (retryOptions: 408, 429, 500, 502, 503, 504) and
 * Gemini CLI (429, 499, any 5xx) decide on the status alone and never read x-should-retry: a 5xx the gateway marked
 * not worth retrying (its own configuration: an upstream's 401/403, a provider without credentials) goes out as
 * 400 FAILED_PRECONDITION, which neither retries and Google itself answers when the service is not set up for a call.
 */
export function geminiHttpStatus(err: GatewayError): number {
  return err.status >= 500 && saysDoNotRetry(err) ? 400 : err.status;
}

/** The status a client of `protocol` is sent for `err` (what the ledger, the log and the metrics record). */
export function sentStatus(protocol: string | undefined, err: GatewayError): number {
  return protocol === "gemini" ? geminiHttpStatus(err) : err.status;
}

/**
 * Longest Retry-After the gateway tells a client, in seconds. An upstream's own value is passed on, and an upstream
 * may say anything (`251606556426`, `1e+297`): past an hour it is no useful advice, and a huge number formats as
 * exponent notation, which is not a valid Retry-After (RFC 9110: digits only).
 */
export const MAX_RETRY_AFTER_S = 3600;

/** Seconds within [0, MAX_RETRY_AFTER_S]; undefined for a value that is no number. */
function boundedRetryAfter(s: number | undefined): number | undefined {
  if (typeof s !== "number" || Number.isNaN(s)) return undefined;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(0, s));
}

/** The Retry-After header's value: whole seconds, digits only. */
export function retryAfterHeader(seconds: number): string {
  return String(Math.ceil(boundedRetryAfter(seconds) ?? 0));
}

/** retry-after-ms, which the openai and Anthropic SDKs prefer to Retry-After: the same wait, not rounded up. */
export function retryAfterMsHeader(seconds: number): string {
  return String(Math.ceil((boundedRetryAfter(seconds) ?? 0) * 1000));
}

export interface GatewayErrorInit {
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Seconds; rendered as the Retry-After header. */
  retryAfter?: number;
  /** For upstream failures: may another provider or a later try succeed? */
  retryable?: boolean;
  /** Overrides the OpenAI-style type derived from the code. */
  type?: string;
  headers?: Record<string, string>;
}

export class GatewayError extends Error {
  readonly details?: Record<string, unknown>;
  readonly retryAfter?: number;
  readonly retryable: boolean;
  readonly type: string;
  readonly headers?: Record<string, string>;

  /**
   * The message and details are masked as the error is built (core/secrets): whatever an upstream echoed (request
   * headers, a key in a URL) never reaches the client, the logs or the traces with the gateway's credentials in it.
   */
  constructor(readonly status: number, readonly code: ErrorCode, message: string, init: GatewayErrorInit = {}) {
    super(redact(message), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "GatewayError";
    this.details = init.details === undefined ? undefined : redactDeep(init.details);
    this.retryAfter = boundedRetryAfter(init.retryAfter);
    this.retryable = init.retryable ?? false;
    this.type = init.type ?? OPENAI_TYPE[code];
    this.headers = init.headers;
  }

  /**
   * The spec's envelope, with an OpenAI-style `type` (and `param`) so official SDKs classify it. An upstream's context
   * overflow is OpenAI's `context_length_exceeded` (what Codex and openai SDK users test error.code for), the
   * gateway's code in details.gateway_code and `param` the prompt's field in the `client`'s protocol when named
   * (core/context-overflow.ts). Only for chat and Responses clients: the spec keeps embeddings' overflow (and every
   * other route's) INVALID_REQUEST. `client` is checked as a string: JSON.stringify passes a key here.
   */
  toJSON(client?: "chat" | "responses"): { error: Record<string, unknown> } {
    const overflow = (client === "chat" || client === "responses") && isContextOverflow(this.details);
    const error: Record<string, unknown> = { code: overflow ? CONTEXT_LENGTH_EXCEEDED : this.code, message: this.message, type: this.type };
    if (this.details !== undefined) error.details = overflow ? { ...this.details, gateway_code: this.code } : this.details;
    const param = overflow ? overflowParam(client) : this.details?.field;
    error.param = typeof param === "string" ? param : null;
    return { error };
  }

  /**
   * Messages-endpoint rendering: same code and details, plus Anthropic's top-level `type: "error"`. An upstream's
   * context overflow reads as Anthropic's "prompt is too long" (figures N > M the provider's or else `overflow`, the
   * gateway's estimate and the catalog's window), or where the prompt fits and the output asked for does not as its
   * "input length and `max_tokens` exceed context limit", so Claude Code recovers on any model.
   */
  toAnthropicJSON(overflow?: OverflowFigures): Record<string, unknown> {
    const message = anthropicOverflowMessage(this.message, this.details, overflow);
    const error: Record<string, unknown> = { type: anthropicErrorType(this.status), code: this.code, message };
    if (this.details !== undefined) error.details = this.details;
    return { type: "error", error };
  }
}

/**
 * Gemini-protocol rendering: Google's envelope `{error: {code, message, status, details: [Any…]}}`, which the Gemini
 * SDKs parse (and Gemini CLI reads RetryInfo from). The gateway's code stays discoverable as an ErrorInfo `reason`
 * (its details as string metadata), the failing field as a BadRequest field violation, Retry-After as a RetryInfo.
 */
export function toGeminiJSON(err: GatewayError): { error: Record<string, unknown> } {
  const metadata: Record<string, string> = { type: err.type };
  for (const [k, v] of Object.entries(err.details ?? {})) metadata[k] = typeof v === "string" ? v : JSON.stringify(v);
  const details: Record<string, unknown>[] = [{ "@type": `${RPC}ErrorInfo`, reason: err.code, domain: "model-gateway", metadata }];
  const field = err.details?.field;
  if (typeof field === "string") details.push({ "@type": `${RPC}BadRequest`, fieldViolations: [{ field, description: err.message }] });
  if (err.retryAfter !== undefined) details.push({ "@type": `${RPC}RetryInfo`, retryDelay: `${retryAfterHeader(err.retryAfter)}s` });
  const code = geminiHttpStatus(err);
  const status = code === err.status ? googleStatus(code) : "FAILED_PRECONDITION";
  return { error: { code, message: err.message, status, details } };
}

/**
 * Any thrown value as a GatewayError; unknown faults become a 500 INTERNAL that leaks nothing. Given the request's
 * signal, a plain error thrown once the request was aborted is what the abort made of the work under it (a premature
 * close, an AbortError from a wait): the abort's own error (a shutdown's 503) or else the client's 499.
 */
export function toGatewayError(err: unknown, signal?: AbortSignal): GatewayError {
  if (err instanceof GatewayError) return err;
  if (signal?.aborted) return signal.reason instanceof GatewayError ? signal.reason : clientClosed(err);
  return new GatewayError(500, "INTERNAL", "Internal gateway error", { cause: err });
}

/**
 * The client went away before its answer: 499 (nginx's "client closed request"), neither the gateway's fault nor the
 * upstream's, so CANCELLED rather than an upstream error (dispatch counts its attempt as cancelled, not failed).
 */
export const clientClosed = (cause?: unknown) =>
  new GatewayError(499 as number, "CANCELLED", "The client closed the request", { retryable: false, cause });

/**
 * A fault of the gateway's configuration (a provider disabled for an unset variable, one without credentials): 502,
 * and no retry, by dispatch or by the client, could succeed before an operator changes the config.
 */
export const configFault = (message: string, details: Record<string, unknown>) =>
  new GatewayError(502, "UPSTREAM_ERROR", message, { details, retryable: false, headers: DO_NOT_RETRY });

export const invalidRequest = (message: string, field?: string, extra: Record<string, unknown> = {}) =>
  new GatewayError(400, "INVALID_REQUEST", message, { details: field === undefined ? extra : { field, ...extra } });
