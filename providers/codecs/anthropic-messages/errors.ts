// Anthropic in-band `error` events (after the stream started) -> the gateway error, which the core renders as the
// client protocol's own error event. Overloaded/rate-limit errors stay retryable for clients.
import { GatewayError } from "../../../core/errors.ts";

export function anthropicStreamError(provider: string, payload: any): GatewayError {
  const type: string = payload?.error?.type ?? "api_error";
  const message: string = payload?.error?.message ?? "upstream stream error";
  const timeout = type === "timeout_error";
  return new GatewayError(timeout ? 504 : 502, timeout ? "UPSTREAM_TIMEOUT" : "UPSTREAM_ERROR", `Provider ${provider} failed mid-stream: ${message}`, {
    retryable: type === "overloaded_error" || type === "rate_limit_error" || type === "api_error" || timeout,
    details: { provider, upstream_error: payload?.error ?? payload },
  });
}
