// A provider's 2xx answer that is not what its API promises (a vector that is not numbers, a rerank result without a
// score, an image that does not decode): a retryable 502 with details.reason invalid_answer, as a body that is not
// JSON gets (providers/answer-check.ts), so another try or endpoint gets its chance and the circuit counts it
// (docs/routing.md, "Upstream errors"). Never served, so never billed.
import { GatewayError } from "./errors.ts";

export function invalidAnswer(provider: string | undefined, message: string): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", message, { retryable: true, details: { provider, reason: "invalid_answer" } });
}
