// An error an upstream sends inside a stream it opened with 200 (an Anthropic `event: error`, a chat chunk or Gemini
// event with `error`, a Responses `error` event or response.failed) is judged as the same error sent as an HTTP
// status (upstreamError, docs/routing.md "Upstream errors"): the decoder names the status its type stands for, and
// one set of rules decides. A request error (prompt too long, invalid argument) is the client's 400 INVALID_REQUEST
// with x-should-retry: false, neither retried nor sent elsewhere; a rate limit, overload or server error stays
// retryable; the gateway's own setup (401/403) or an account out of credit goes to the next endpoint.
import { GatewayError } from "../core/errors.ts";
import { OUT_OF_CREDIT } from "../core/retryable-status.ts";
import { upstreamError } from "./http.ts";

/**
 * `status`: the HTTP status the upstream's error stands for; `error`: its error object (message, type/code/status,
 * param); `retryAfter`: a wait the error itself names (Gemini's RetryInfo).
 */
export function inBandError(provider: string, status: number, error: unknown, retryAfter?: number): GatewayError {
  const judged = upstreamError(provider, status, {}, JSON.stringify({ error }));
  const said = (error as { message?: unknown } | undefined)?.message;
  const message = typeof said === "string" && said ? said : "upstream stream error";
  const what = judged.code === "INVALID_REQUEST" ? "rejected the request"
    : judged.details?.reason === OUT_OF_CREDIT ? "failed, its account out of credit or over its spending cap" : "failed mid-stream";
  return new GatewayError(judged.status, judged.code, `Provider ${provider} ${what}: ${message}`, {
    details: judged.details,
    retryable: judged.retryable,
    retryAfter: retryAfter ?? judged.retryAfter,
    headers: judged.headers,
  });
}
