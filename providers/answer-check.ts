// What a provider's 2xx JSON answer must be before anything uses it (docs/routing.md, "Upstream errors"): JSON at
// all, shallow enough that the recursive steps after it (JSON.stringify to the client, metering, caching) cannot
// overflow the stack (the request bound, core/http/json-shape.ts), and not an error envelope sent with status 200
// (a proxy, a self-hosted server, a BYOK base_url) — which would otherwise go out as an empty answer, billed.
// Each is a retryable 502 UPSTREAM_ERROR, so another try or endpoint gets its chance.
import { GatewayError } from "../core/errors.ts";
import { checkJsonShape, MAX_JSON_DEPTH } from "../core/http/json-shape.ts";

/** Keys an error envelope may carry besides `error`: anything else (an id, choices, a job's status) is an answer. */
const ENVELOPE_KEYS = new Set(["error", "type", "object", "code", "message", "status", "request_id"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The provider's error when `json` is an error envelope: OpenAI's and Gemini's `{"error": {...}}`, Anthropic's
 * `{"type": "error", "error": {...}}`. A job or response object that reports its own failure in an `error` field
 * (a video job, a Responses `status: "failed"`, a long-running operation) has other keys and stays an answer.
 */
export function errorEnvelope(json: unknown): Record<string, unknown> | undefined {
  if (!isObject(json)) return undefined;
  if (json.type === "error") return isObject(json.error) ? json.error : { message: typeof json.message === "string" ? json.message : "error" };
  if (!isObject(json.error)) return undefined;
  for (const k in json) if (!ENVELOPE_KEYS.has(k)) return undefined;
  return json.error;
}

/** `text`, a 2xx answer's body, parsed and checked; throws the 502 described above. */
export function parseAnswer(provider: string, status: number, contentType: string | undefined, text: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(stripBom(text));
  } catch {
    // Not the body's text: an HTML page or a binary body says nothing useful, and may say what it should not.
    throw answerError(provider, "invalid_answer", `Provider ${provider}'s answer (HTTP ${status}${contentType ? `, ${contentType}` : ""}) was not valid JSON`);
  }
  const shape = checkJsonShape(json);
  if (shape) {
    const why = shape.kind === "depth" ? `is nested deeper than ${MAX_JSON_DEPTH} levels` : "holds a number too large to represent";
    throw answerError(provider, shape.kind === "depth" ? "answer_too_deep" : "invalid_answer", `Provider ${provider}'s answer ${why} (at ${shape.field || "the top"}); it was dropped`);
  }
  const err = errorEnvelope(json);
  if (err) {
    const message = typeof err.message === "string" && err.message ? err.message.slice(0, 500) : JSON.stringify(err).slice(0, 500);
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} answered HTTP ${status} with an error: ${message}`, {
      // No upstream_status: a 2xx there would read as not retryable (core/dispatch.ts isRetryable).
      retryable: true, details: { provider, reason: "error_answer", upstream_error: err },
    });
  }
  return json;
}

/** `text` without one leading BOM (U+FEFF), which some servers write before JSON and JSON.parse refuses. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function answerError(provider: string, reason: string, message: string): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", message, { retryable: true, details: { provider, reason } });
}
