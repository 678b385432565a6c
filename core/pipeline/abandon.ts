// Stop waiting for a pipeline the client has left: a plugin whose handle never settles would otherwise hold its
// request (in-flight count, config snapshot, a shutdown's grace period) forever.
import { UpstreamCancel, upstreamSignal } from "../net/request-abort.ts";

/**
 * How long the pipeline may take to unwind after the request was aborted: long enough for the plugins' own cleanup
 * (a budget refund, a store write, each bounded by the store's timeout) to land in the ledger record, short enough
 * to come well before a shutdown's cut gives up on the request (core/shutdown.ts AFTER_CUT_MS).
 */
export const ABANDON_AFTER_MS = 2000;

/**
 * `work`, unless `signal` aborts and `work` has not settled `ms` later: then a rejection with `abandoned()`. What
 * `work` does after that is still watched (never an unhandled rejection), just no longer waited for.
 */
export function untilAbandoned<T>(work: Promise<T>, signal: AbortSignal, abandoned: () => Error, ms = ABANDON_AFTER_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      timer = setTimeout(() => reject(abandoned()), ms);
    };
    // A request's own signal has the cheap emitter (no EventTarget listener per request); another, the signal itself.
    const cancel = upstreamSignal(signal);
    const stop = () => {
      clearTimeout(timer);
      if (cancel instanceof UpstreamCancel) cancel.removeListener("abort", onAbort);
      else cancel.removeEventListener("abort", onAbort);
    };
    if (signal.aborted) onAbort();
    else if (cancel instanceof UpstreamCancel) cancel.on("abort", onAbort);
    else cancel.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => (stop(), resolve(value)),
      (err) => (stop(), reject(err)),
    );
  });
}
