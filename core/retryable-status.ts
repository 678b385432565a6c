// Which upstream HTTP statuses are worth another try (the same endpoint after a wait, or the next one). One list for
// the provider layer (providers/http.ts: retryable, x-should-retry) and dispatch (core/dispatch.ts: fallback, health),
// so the two can never disagree about a status again (409 was retryable in one and final in the other).

/**
 * 408 (timeout), 409 (a conflict such as OpenAI's lock timeout, which its own SDKs retry), 429 (rate limit) and
 * every 5xx. Other 4xx are the request's or the gateway's configuration's fault: the same call would fail again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * details.reason of an upstream 404 about what the gateway chose, not what the client named: the upstream model or
 * Azure deployment (gateway.yaml) or the URL its api_version makes. Not retryable (the same endpoint answers the same),
 * but another endpoint of the model may have it (core/dispatch.ts endpointFault).
 */
export const UPSTREAM_NOT_FOUND = "upstream_not_found";

/**
 * details.reason of an upstream answer past the gateway's bounds (server.upstream_limits): a whole JSON answer, or a
 * stream event before the stream's first was relayed. Not retryable (the same request would be as large, generated
 * and billed again), but another endpoint of the model may answer within them (core/dispatch.ts endpointFault).
 */
export const ANSWER_TOO_LARGE = "answer_too_large";
export const EVENT_TOO_LARGE = "event_too_large";

/**
 * details.reason of an upstream saying the account behind the key is out of credit or over its spending cap with a
 * status that otherwise means "try again" (OpenAI's 429 insufficient_quota, as against rate_limit_exceeded). No wait
 * makes it pass: not retryable (core/dispatch.ts isRetryable, and x-should-retry: false), but another endpoint of the
 * model, on another account, may serve, as after a 402 (core/dispatch.ts endpointFault).
 */
export const OUT_OF_CREDIT = "out_of_credit";
