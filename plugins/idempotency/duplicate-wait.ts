// How a duplicate waits for the first request with its key: it polls the store, soon at first (most requests are
// short, and the replay follows soon after), then less and less often up to every few seconds, so a waiter of a long
// stream costs a store call every MAX_POLL_MS, not two a second. It stops with a 409 (./in-progress.ts) when the
// first's owner is gone, or, for a claim that says nothing of its renewal (written by an older release, which may
// have died), after server.upstream_timeout_ms of waiting, the bound that release kept.
import type { IdempotencyBegin } from "../../core/store/types.ts";
import { inProgressError, orphaned } from "./in-progress.ts";

export const FIRST_POLL_MS = 20;
/** The longest gap between polls: also about the most a replay lags behind the first request's end. */
export const MAX_POLL_MS = 5_000;

type Pending = Extract<IdempotencyBegin, { state: "pending" }>;

export class DuplicateWait {
  private nextMs = FIRST_POLL_MS;
  private readonly startedAt: number;

  constructor(private readonly field: string, private readonly unrenewedWaitMs: number, now: number) {
    this.startedAt = now;
  }

  /** The key is still claimed: how long to wait before asking the store again; throws the 409 when waiting is over. */
  next(state: Pending, now: number): number {
    const ms = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, MAX_POLL_MS);
    if (state.inProcess) return ms;
    if (state.renewal) {
      if (orphaned(state.renewal)) throw inProgressError(this.field, { quietMs: state.renewal.quietMs });
      return ms;
    }
    const left = this.startedAt + this.unrenewedWaitMs - now;
    if (left <= 0) throw inProgressError(this.field, { waitedMs: this.unrenewedWaitMs });
    return Math.min(ms, left);
  }
}
