// The one error a request gets when the gateway's state store cannot answer: 503 STORE_UNAVAILABLE with
// Retry-After, never a hang or an opaque 500. The cause stays in the log, not in the answer.
import { settleWithin } from "../deadline.ts";
import { GatewayError } from "../errors.ts";

export type UnavailableReason = "timeout" | "error" | "down" | "state_lost";

export function storeUnavailable(kind: string, reason: UnavailableReason, retryAfterS: number, cause?: unknown): GatewayError {
  const why = reason === "state_lost"
    ? "has lost the gateway's state (spend and reservations); an operator must restore it or accept the reset"
    : reason === "timeout" ? "did not answer in time" : "is unavailable";
  return new GatewayError(503, "STORE_UNAVAILABLE", `The gateway's state store (${kind}) ${why}; retry the request shortly`, {
    retryAfter: retryAfterS,
    details: { store: kind, reason },
    cause,
  });
}

/** A store call that did not settle within the bound. */
export class StoreTimeoutError extends Error {
  constructor(readonly op: string, readonly ms: number) {
    super(`store call ${op} did not answer within ${ms} ms`);
    this.name = "StoreTimeoutError";
  }
}

/** The store answers but no longer holds the gateway's state (a Redis restarted without persistence, flushed). */
export class StoreStateLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreStateLostError";
  }
}

/**
 * `p`, or a StoreTimeoutError after `ms` (the call itself is left to finish or fail on its own). The time is counted as
 * core/deadline.ts counts it: an answer that came while the gateway's own loop was busy is an answer, not an outage.
 */
export function within<T>(p: Promise<T>, ms: number, op: string): Promise<T> {
  return settleWithin(p, ms, () => {
    throw new StoreTimeoutError(op, ms);
  });
}
