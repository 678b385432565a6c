// The Retry-After a request that failed on every endpoint passes on to its client (core/dispatch.ts).
import type { GatewayError } from "./errors.ts";

/**
 * Each endpoint's latest Retry-After, as the moment it named. The client is told the soonest of them, counted from
 * now: a retry walks every endpoint again and one that takes it is enough, so the largest would hold the client past
 * the moment an endpoint said it would serve again, while any earlier only meets refusals that were announced. An
 * endpoint whose latest failure named no time (a 500) promises nothing: it neither shortens the wait nor clears it.
 */
export class RetryHint {
  /** Endpoint (index in ctx.targets) -> when it said it may be asked again, in the caller's clock (ms). */
  private readonly until = new Map<number, number>();

  note(endpoint: number, err: GatewayError, now: number): void {
    if (err.retryAfter === undefined) this.until.delete(endpoint); // its later answer supersedes an earlier hint
    else this.until.set(endpoint, now + err.retryAfter * 1000);
  }

  /** Whole seconds (as Retry-After is sent) until the first endpoint said it could be retried; undefined when none named a time. */
  seconds(now: number): number | undefined {
    let soonest: number | undefined;
    for (const t of this.until.values()) if (soonest === undefined || t < soonest) soonest = t;
    return soonest === undefined ? undefined : Math.max(0, Math.ceil((soonest - now) / 1000));
  }
}
