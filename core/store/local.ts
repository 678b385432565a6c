// In-process state shared by the memory and SQLite backends: rate windows, budget reservations and claimed
// idempotency keys. None of it needs to outlive the process (a restart has no requests in flight), so it stays
// off the disk. Only one process may use a SQLite file; several replicas use Redis.
import { gcraAdjust, gcraCharge, windowState } from "./gcra.ts";
import type { ClaimRenewal, IdempotencyBegin, LeaseRenewal, RateCharge, RateResult, RateState, Reservation, Settlement } from "./types.ts";

interface Held { amount: bigint; expires: number }
interface Claim { hash: string; owner: string; expires: number }

export class LocalState {
  private readonly tats = new Map<string, number>();
  /** project\nperiodKey -> held reservations and their running sum. */
  private readonly reservations = new Map<string, { sum: bigint; held: Map<string, Held>; nextExpiry: number }>();
  private readonly claims = new Map<string, Claim>();

  rateLimit(charges: RateCharge[], now: number): RateResult {
    return gcraCharge(this.tats, charges, now);
  }

  rateAdjust(key: string, limit: number, delta: number, now: number): void {
    gcraAdjust(this.tats, key, limit, delta, now);
  }

  rateState(windows: { key: string; limit: number }[], now: number): RateState[] {
    return windows.map((w) => windowState({ ...w, cost: 0 }, Math.max(this.tats.get(w.key) ?? now, now), now));
  }

  /** Reserved amount for a budget period; expired leases are swept only once the earliest one is due. */
  reserved(project: string, periodKey: string, now: number): bigint {
    const b = this.reservations.get(`${project}\n${periodKey}`);
    if (!b) return 0n;
    if (now >= b.nextExpiry) {
      b.sum = 0n;
      b.nextExpiry = Infinity;
      for (const [id, h] of b.held) {
        if (h.expires <= now) b.held.delete(id);
        else {
          b.sum += h.amount;
          if (h.expires < b.nextExpiry) b.nextExpiry = h.expires;
        }
      }
    }
    return b.sum;
  }

  /** Synchronous check-and-hold; `spent` is the period's recorded spend. */
  reserve(r: Reservation, spent: bigint, now: number): { ok: boolean; spentPico: bigint; reservedPico: bigint } {
    const reserved = this.reserved(r.project, r.periodKey, now);
    if (spent + reserved + r.amountPico > r.limitPico) return { ok: false, spentPico: spent, reservedPico: reserved };
    const k = `${r.project}\n${r.periodKey}`;
    let b = this.reservations.get(k);
    if (!b) this.reservations.set(k, (b = { sum: 0n, held: new Map(), nextExpiry: Infinity }));
    const expires = now + r.leaseMs;
    b.held.set(r.id, { amount: r.amountPico, expires });
    b.sum += r.amountPico;
    if (expires < b.nextExpiry) b.nextExpiry = expires;
    return { ok: true, spentPico: spent, reservedPico: b.sum };
  }

  /** Lease held reservations longer (none is brought back; the sweep in reserved() finds the later expiries). */
  renew(holds: LeaseRenewal[], now: number): void {
    for (const r of holds) {
      const h = this.reservations.get(`${r.project}\n${r.periodKey}`)?.held.get(r.id);
      if (h && h.expires > now) h.expires = Math.max(h.expires, now + r.leaseMs);
    }
  }

  release(s: Settlement): void {
    const k = `${s.project}\n${s.periodKey}`;
    const b = this.reservations.get(k);
    const h = b?.held.get(s.id);
    if (!b || !h) return;
    b.held.delete(s.id);
    b.sum -= h.amount;
    if (b.held.size === 0) this.reservations.delete(k);
  }

  /** Claim a key unless someone holds it; `done` looks up a finished record when nobody does. */
  claim(scope: string, hash: string, owner: string, leaseMs: number, now: number, done: () => IdempotencyBegin | undefined): IdempotencyBegin {
    const held = this.claims.get(scope);
    if (held && held.expires > now) return held.hash === hash ? { state: "pending" } : { state: "mismatch" };
    const finished = done();
    if (finished) return finished;
    this.claims.set(scope, { hash, owner, expires: now + leaseMs });
    return { state: "new" };
  }

  /** Lease claims their owners still hold longer (an expired one is not brought back: another may have taken it). */
  renewClaims(claims: ClaimRenewal[], now: number): void {
    for (const c of claims) {
      const held = this.claims.get(c.scope);
      if (held && held.owner === c.owner && held.expires > now) held.expires = Math.max(held.expires, now + c.leaseMs);
    }
  }

  unclaim(scope: string, owner: string): void {
    if (this.claims.get(scope)?.owner === owner) this.claims.delete(scope);
  }
}
