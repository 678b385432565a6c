// A duplicate waits for the first request with its key for as long as that request runs (its own timeouts bound it),
// but not for a dead one: a process killed mid-request (kill -9, a crashed worker) leaves its claim to hold until its
// 15-minute lease ends, with nothing sent meanwhile. On a shared store (Redis) claims are renewed every few seconds
// while their request runs (./claim-lease.ts), so one silent for long has lost its owner: the duplicate is told that
// the key is still in progress (409, which the openai and Anthropic SDKs retry after Retry-After); a retry runs once
// the dead claim lapses. "Silent for long" is generous: a store outage stops renewals too (the owner renews again as
// soon as the store answers), and a live owner's duplicate told to give up would be retried into a 409 or, sent with
// a new key, run and billed twice. A claim kept in this process (memory, SQLite) has a live owner by definition.
import { GatewayError } from "../../core/errors.ts";
import type { ClaimRenewalState } from "../../core/store/types.ts";

/** What a duplicate is told to wait before it asks again. */
export const IN_PROGRESS_RETRY_AFTER_S = 1;

/** Renewal periods a claim may miss (the store down a while) before its owner is taken for dead, and the least silence that is. */
const ORPHAN_PERIODS = 3;
export const ORPHAN_MIN_MS = 60_000;

/** Unrenewed for three of its owner's periods and at least a minute: the owner is gone. */
export function orphaned(renewal: ClaimRenewalState): boolean {
  return renewal.quietMs > Math.max(ORPHAN_PERIODS * renewal.everyMs, ORPHAN_MIN_MS);
}

/** Why a duplicate stops waiting: its claim's owner stopped renewing it, or (a claim without renewal info) the wait's bound. */
export type GaveUp = { quietMs: number } | { waitedMs: number };

/** The 409 a duplicate gets. The first request may still be running, so it says to retry later, never to use a new key. */
export function inProgressError(field: string, why: GaveUp): GatewayError {
  const reason =
    "quietMs" in why
      ? `the gateway process running it has not renewed its claim for ${Math.round(why.quietMs / 1000)} s (it may have stopped)`
      : `waited ${why.waitedMs} ms (server.upstream_timeout_ms) for it to finish; its claim is from a gateway release that does not say whether it is still running`;
  return new GatewayError(
    409,
    "CONFLICT",
    `A request with this idempotency key is still in progress: ${reason}. Retry later with the same key: you get its answer once it is kept, ` +
      "or the request runs once the claim lapses (at most 15 minutes after its last renewal)",
    { details: { field, reason: "key_in_progress", ...("quietMs" in why ? { quiet_ms: why.quietMs } : { waited_ms: why.waitedMs }) }, retryAfter: IN_PROGRESS_RETRY_AFTER_S },
  );
}
