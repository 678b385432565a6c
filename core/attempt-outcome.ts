// The `outcome` label of gateway_upstream_duration_seconds for an attempt that did not answer. The dashboard's
// "Failed upstream attempts" panel counts `error`: failures of the provider or of the gateway's way to it. An attempt
// cut by the request's own abort (the client left, a shutdown) is `cancelled`, and one that failed for the client's
// own request (the upstream's 400 for a bad parameter, an input the provider cannot take) is `client_error`: the
// client is answered with that 4xx and the circuit breaker does not count it, so neither may the dashboard.
import type { GatewayError } from "./errors.ts";

export type FailedAttemptOutcome = "error" | "cancelled" | "client_error";

/**
 * The request's own fault, by the status its client gets: a 4xx other than 408 (a timeout), 429 (a rate limit) and
 * 499 (the client left). An upstream's refusal of the gateway's credentials or setup (401, 403, Google's 400 for an
 * invalid key or a location it will not serve: providers/http.ts) or of its account (out of credit) is a 502 by then:
 * an error of the endpoint, counted as a failure.
 */
const requestFault = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429 && status !== 499;

export function failedAttemptOutcome(err: GatewayError, aborted: boolean): FailedAttemptOutcome {
  if (aborted) return "cancelled";
  return requestFault(err.status) ? "client_error" : "error";
}
