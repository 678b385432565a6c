// A request's own time limit (an image request's hold, a video job's job_timeout_seconds) stops the work under it by
// aborting that work's signal with the 504 the request ends with. That abort is no client leaving: dispatch records
// the attempt it cut as that timeout (504 UPSTREAM_TIMEOUT, a failed attempt in the metrics and for the endpoint's
// health), not as CANCELLED, so the request's ledger record, access line and metrics say what happened.
import type { GatewayError } from "./errors.ts";

const limits = new WeakSet<object>();

/** Mark `err` as the time limit's own error: a signal aborted with it was cut by the limit, not by the client. */
export function timeLimitError(err: GatewayError): GatewayError {
  limits.add(err);
  return err;
}

/** The time limit's error when this signal was aborted by one (undefined for a client that left, a shutdown). */
export function timeLimitCut(signal: AbortSignal): GatewayError | undefined {
  return signal.aborted && limits.has(signal.reason as object) ? (signal.reason as GatewayError) : undefined;
}
