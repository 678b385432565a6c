// An OpenAI-compatible host that serves /responses itself (native_responses) but not /responses/input_tokens
// (OpenRouter, xAI, …): its count route answers 404 (OpenAI's own `unknown_url`, or a body that is no error of the
// provider's) or 405. The count then falls back to the local count (core/endpoints/responses-input-tokens.ts).
import { GatewayError } from "../errors.ts";

/** What x-mg-token-count appends to a local count made because the upstream has no count route. */
export const NO_COUNT_ROUTE = "the upstream has no /responses/input_tokens";

/**
 * The upstream said its count route does not exist. A 404 about something the client named (an item, a previous
 * response: a 400 INVALID_REQUEST) or about the model (details.reason upstream_not_found) is not that.
 */
export function countRouteMissing(e: unknown): boolean {
  if (!(e instanceof GatewayError) || e.code !== "UPSTREAM_ERROR") return false;
  const status = e.details?.upstream_status;
  return (status === 404 || status === 405) && e.details?.reason === undefined;
}
