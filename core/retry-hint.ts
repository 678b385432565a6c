// Each endpoint's latest failure in one request (core/dispatch.ts): what a retry of that endpoint waits for, and the
// Retry-After a request that failed on every endpoint passes on to its client.
import type { GatewayError } from "./errors.ts";

/** An endpoint's latest failure and when it came, in the caller's clock (ms). */
export interface Failure {
  err: GatewayError;
  at: number;
}

/**
 * Per endpoint (index in ctx.targets), its latest failure. A retry of an endpoint waits on that endpoint's own error
 * (its Retry-After, its backoff), never on whichever endpoint failed last.
 *
 * The client is told the soonest Retry-After any endpoint named, counted from now: a retry walks every endpoint again
 * and one that takes it is enough, so the largest would hold the client past the moment an endpoint said it would
 * serve again, while any earlier only meets refusals that were announced. An endpoint whose latest failure named no
 * time (a 500) promises nothing: it neither shortens the wait nor clears it.
 */
export class RetryHint {
  private readonly failures = new Map<number, Failure>();

  note(endpoint: number, err: GatewayError, now: number): void {
    this.failures.set(endpoint, { err, at: now }); // its later answer supersedes an earlier one
  }

  /** The endpoint's latest failure in this request, if it failed. */
  last(endpoint: number): Failure | undefined {
    return this.failures.get(endpoint);
  }

  /**
   * Seconds, to the millisecond, until the first endpoint said it could be retried; undefined when none named a time.
   * Not rounded: Retry-After rounds up to whole seconds, retry-after-ms carries this (an upstream's 1.5 s stays 1.5 s).
   */
  seconds(now: number): number | undefined {
    let soonest: number | undefined;
    for (const { err, at } of this.failures.values()) {
      if (err.retryAfter === undefined) continue;
      const t = at + err.retryAfter * 1000;
      if (soonest === undefined || t < soonest) soonest = t;
    }
    return soonest === undefined ? undefined : Math.max(0, Math.ceil(soonest - now) / 1000);
  }
}
