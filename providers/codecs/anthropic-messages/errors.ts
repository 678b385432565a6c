// Anthropic in-band `error` events (after the stream started) -> the gateway error, which the core renders as the
// client protocol's own error event (or, before the stream's first event, as its error answer). Judged as the same
// error sent as an HTTP status (providers/in-band-error.ts): invalid_request_error is the client's 400, never
// retried; overloaded, rate-limit, api and timeout errors stay retryable.
import { anthropicErrorType } from "../../../core/errors.ts";
import type { GatewayError } from "../../../core/errors.ts";
import { inBandError } from "../../in-band-error.ts";

/** The statuses Anthropic documents for its error types, in the order their types are matched (504 before 408). */
const STATUSES = [400, 401, 402, 403, 404, 413, 429, 504, 529, 500];

/** The HTTP status an Anthropic error type stands for (the inverse of anthropicErrorType); an unknown type: 500. */
export function anthropicTypeStatus(type: unknown): number {
  return STATUSES.find((s) => anthropicErrorType(s) === type) ?? 500;
}

export function anthropicStreamError(provider: string, payload: any): GatewayError {
  const error = payload?.error ?? payload;
  return inBandError(provider, anthropicTypeStatus(error?.type ?? "api_error"), error);
}

/**
 * An `event: error`'s data -> the gateway error. Data that is not JSON (a proxy's `upstream reset`) is the provider's
 * own failure text: the provider failed mid-stream in those words (retryable before the first event, as api_error).
 */
export function anthropicErrorEvent(provider: string, data: string): GatewayError {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    payload = { message: data };
  }
  return anthropicStreamError(provider, payload);
}
