// Which conversation a native OpenAI upstream (its /responses passes through) gets for a request that continues a
// stored response (previous_response_id), shared by create (core/endpoints/responses-state.ts) and the count
// (core/endpoints/responses-input-tokens.ts), so both send the same thing.
import { GatewayError } from "../errors.ts";

/** The gateway's own reasoning blob (mgr1.): state for the translated upstream that made it, which no native one can verify. */
const gatewayBlob = (i: any) => i?.type === "reasoning" && typeof i.encrypted_content === "string" && i.encrypted_content.startsWith("mgr1.");

/** The body without the input items `drop` names (the same body when there are none). */
function without(body: any, drop: (i: any) => boolean): any {
  return Array.isArray(body.input) && body.input.some(drop) ? { ...body, input: body.input.filter((i: any) => !drop(i)) } : body;
}

/**
 * The rebuilt conversation for a native upstream that did not make the previous response: reasoning items it cannot
 * have issued go (a gateway blob, mgr1., is for translated upstreams; an item without encrypted_content is a
 * reference to state the upstream does not hold) — OpenAI refuses both.
 */
export function nativeRebuilt(body: any): any {
  return without(body, (i) => gatewayBlob(i) || (i?.type === "reasoning" && typeof i.encrypted_content !== "string"));
}

/**
 * The rebuilt conversation for the native upstream that made the previous response, when it is not continued by id
 * (the gateway runs the mcp tool's turns; the guardrails' placeholders, see continuesByHistory): reasoning items
 * referenced by id are that upstream's own, so they stay.
 */
export function sameUpstreamRebuilt(body: any): any {
  return without(body, gatewayBlob);
}

/**
 * The native upstream no longer holds the response the gateway passed through by id (past its own retention, a
 * zero-retention organisation, a key moved to another OpenAI project): OpenAI's `previous_response_not_found`.
 */
export function upstreamLostPrevious(e: unknown): boolean {
  const upstream = e instanceof GatewayError ? (e.details?.upstream_error as { code?: unknown } | undefined) : undefined;
  return upstream?.code === "previous_response_not_found";
}

/**
 * The native upstream no longer holds an item the history references by id (a reasoning item of a response it
 * forgot, as in upstreamLostPrevious): OpenAI's 404 "Item with id 'rs_…' not found", without a code.
 */
export function upstreamLostItem(e: unknown): boolean {
  const upstream = e instanceof GatewayError ? (e.details?.upstream_error as { message?: unknown } | undefined) : undefined;
  return e instanceof GatewayError && e.details?.upstream_status === 404 && typeof upstream?.message === "string" && /^Item with id '[^']*' not found/.test(upstream.message);
}
