// A duplicate waits for the first request with its key for as long as that request runs (its own timeouts bound it),
// but not for a dead one: a process killed mid-request (kill -9, a crashed worker) leaves its claim to hold until its
// 15-minute lease ends, with nothing sent meanwhile. Claims are renewed every few seconds while their request runs
// (./claim-lease.ts), so one silent for two renewal periods (one missed renewal is forgiven: the store down a
// moment) has lost its owner: the duplicate is told at once that the key is still in progress (409, which the openai
// and Anthropic SDKs retry after Retry-After); a retry runs once the dead claim lapses.
import { GatewayError } from "../../core/errors.ts";
import type { ClaimRenewalState } from "../../core/store/types.ts";

/** What a duplicate is told to wait before it asks again. */
export const IN_PROGRESS_RETRY_AFTER_S = 1;

/** No renewal for two of its owner's periods: the owner is gone (a claim from a release that did not say is waited for). */
export function orphaned(renewal: ClaimRenewalState | undefined): boolean {
  return renewal !== undefined && renewal.quietMs > 2 * renewal.everyMs;
}

/** The 409 a duplicate gets when the first request's claim stopped being renewed `quietMs` ago. */
export function inProgressError(field: string, quietMs: number): GatewayError {
  return new GatewayError(
    409,
    "CONFLICT",
    `A request with this idempotency key is still in progress, but the gateway process running it stopped renewing its claim ${Math.round(quietMs / 1000)} s ago ` +
      "(it may have stopped); retry later to get its answer, or once the claim lapses (at most 15 minutes) to run it, or send a new key to run the request again now",
    { details: { field, reason: "key_in_progress", quiet_ms: quietMs }, retryAfter: IN_PROGRESS_RETRY_AFTER_S },
  );
}
