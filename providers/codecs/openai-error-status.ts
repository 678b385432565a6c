// The HTTP status an OpenAI-protocol error object sent inside a stream stands for: a chat chunk's `error`
// ({message, type, code, param}), a Responses `error` event or response.failed's `error` ({code, message}). OpenAI
// sends the same object with that status when it refuses before streaming; the gateway judges the two alike
// (providers/in-band-error.ts). Only names are read here: which statuses are retried is upstreamError's business.
import { anthropicErrorType } from "../../core/errors.ts";

/** Error codes that name their status outright (protocols.md §1.7, protocols-2.md §1.4-1.5). */
const CODE_STATUS: Readonly<Record<string, number>> = {
  context_length_exceeded: 400, string_above_max_length: 400, invalid_prompt: 400, invalid_api_key: 401,
  model_not_found: 404, rate_limit_exceeded: 429, insufficient_quota: 429, server_error: 500, vector_store_timeout: 504,
};

/** OpenAI's rate-limit types ("requests", "tokens") and the types it shares with Anthropic's names. */
const TYPE_STATUS: Readonly<Record<string, number>> = { requests: 429, tokens: 429, insufficient_quota: 429, server_error: 500 };
const SHARED_STATUSES = [400, 401, 403, 404, 429];

/** An image the request carries that the upstream could not use (invalid_image_url, image_too_large...): the request's fault. */
const IMAGE_FAULT = /(^invalid_|image)/;

export function openaiErrorStatus(error: unknown): number {
  const e = (error ?? {}) as { status?: unknown; code?: unknown; type?: unknown };
  // OpenAI-compatible hosts (OpenRouter...) put the HTTP status itself in `code` or `status`.
  for (const n of [e.status, e.code]) if (typeof n === "number" && n >= 400 && n < 600) return n;
  if (typeof e.code === "string") {
    if (CODE_STATUS[e.code] !== undefined) return CODE_STATUS[e.code]!;
    if (IMAGE_FAULT.test(e.code)) return 400;
  }
  if (typeof e.type === "string") {
    if (TYPE_STATUS[e.type] !== undefined) return TYPE_STATUS[e.type]!;
    const shared = SHARED_STATUSES.find((s) => anthropicErrorType(s) === e.type);
    if (shared !== undefined) return shared;
  }
  return 500; // unnamed: a server error, worth another try as before
}
