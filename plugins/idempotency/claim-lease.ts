// An idempotency claim lives as long as its request: the claim has a lease so that a crashed process's key is freed,
// but a request may run longer than any fixed lease (a stream is bounded only between its chunks). Had the claim
// lapsed, a retry with the same key and body would run, and bill, a second time instead of waiting and replaying.
// So each process renews its claims every RENEW_EVERY_MS in one store call, and only a dead process's claims expire.
// The renewals are frequent (a few seconds) so that a duplicate can tell a dead owner's claim, silent for long, from a
// live one at once (./in-progress.ts); the lease stays long, so a store outage of minutes loses no live claim. A
// sweep the store failed is tried again every second, not a period later: once an outage ends, the live claims are
// renewed at once and do not look like a dead process's to their duplicates.
import { LeaseRenewal } from "../../core/store/lease-renewal.ts";
import type { ClaimRenewal, Store } from "../../core/store/types.ts";

/** How long a claim is held, from its last renewal, before another request may take over from a crashed owner. */
export const LEASE_MS = 15 * 60_000;
/** How often a live claim is renewed: one store call per process per period while any keyed request runs. */
export const RENEW_EVERY_MS = 10_000;
/** How soon a failed sweep is tried again. */
export const RETRY_FAILED_MS = 1_000;

/** Per store: the claims this process's requests hold and have not completed or released yet. */
const renewals = new WeakMap<Store, LeaseRenewal<ClaimRenewal>>();

/** The renewal of this process's idempotency claims on `store` (exported for tests, which look at its size). */
export function claimLeases(store: Store): LeaseRenewal<ClaimRenewal> {
  let r = renewals.get(store);
  if (!r) {
    let retry: NodeJS.Timeout | undefined;
    const again = () => {
      retry ??= setTimeout(() => {
        retry = undefined;
        void r!.sweep();
      }, RETRY_FAILED_MS).unref();
    };
    r = new LeaseRenewal<ClaimRenewal>(RENEW_EVERY_MS, (claims) => store.renewClaims(claims, Date.now()), { onError: again });
    renewals.set(store, r);
  }
  return r;
}
