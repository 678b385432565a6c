// In-process state shared by the memory and SQLite backends: rate windows, budget reservations and claimed
// idempotency keys. None of it needs to outlive the process (a restart has no requests in flight), so it stays
// off the disk. Only one process may use a SQLite file; several replicas use Redis.
import { gcraAdjust, gcraCharge, windowState } from "./gcra.ts";
import { periodBounds } from "./periods.ts";
import type { ClaimRenewal, IdempotencyBegin, LeaseRenewal, RateCharge, RateResult, RateState, Reservation, Settlement } from "./types.ts";

/** A budget hold: its amount, its lease, and when its request was admitted (the periods its cost is charged to). */
interface Held { amount: bigint; expires: number; at: number }
interface Claim { hash: string; owner: string; expires: number }

/**
 * A budget scope's holds, whatever period each was made under: one counts against every period containing its
 * admission (a reload may change the budget's period while it runs), so holds are kept per scope, not per period.
 * `earliest`/`latest` bound the admissions (never narrower than the holds are): while they lie within the period
 * asked about, the running sum is the answer.
 */
interface ScopeHolds { sum: bigint; held: Map<string, Held>; nextExpiry: number; earliest: number; latest: number }

export class LocalState {
  private readonly tats = new Map<string, number>();
  /** budget scope (project, or a key's: key-budget.ts) -> held reservations and their running sum. */
  private readonly reservations = new Map<string, ScopeHolds>();
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

  /** What holds made within a budget period still hold; expired leases are swept only once the earliest one is due. */
  reserved(project: string, periodKey: string, now: number): bigint {
    const b = this.reservations.get(project);
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
    const { start, end } = periodBounds(periodKey);
    if (b.earliest >= start && b.latest < end) return b.sum;
    // Some hold was made outside the period (in the one before, near its boundary): count those within it.
    let sum = 0n;
    b.earliest = Infinity;
    b.latest = -Infinity;
    for (const h of b.held.values()) {
      if (h.expires <= now) continue;
      if (h.at < b.earliest) b.earliest = h.at;
      if (h.at > b.latest) b.latest = h.at;
      if (h.at >= start && h.at < end) sum += h.amount;
    }
    return sum;
  }

  /** Synchronous check-and-hold; `spent` is the period's recorded spend. */
  reserve(r: Reservation, spent: bigint, now: number): { ok: boolean; spentPico: bigint; reservedPico: bigint } {
    const reserved = this.reserved(r.project, r.periodKey, now);
    if (spent + reserved + r.amountPico > r.limitPico) return { ok: false, spentPico: spent, reservedPico: reserved };
    let b = this.reservations.get(r.project);
    if (!b) this.reservations.set(r.project, (b = { sum: 0n, held: new Map(), nextExpiry: Infinity, earliest: Infinity, latest: -Infinity }));
    const expires = now + r.leaseMs;
    const at = r.at ?? now;
    b.held.set(r.id, { amount: r.amountPico, expires, at });
    b.sum += r.amountPico;
    if (expires < b.nextExpiry) b.nextExpiry = expires;
    if (at < b.earliest) b.earliest = at;
    if (at > b.latest) b.latest = at;
    return { ok: true, spentPico: spent, reservedPico: reserved + r.amountPico };
  }

  /** Lease held reservations longer (none is brought back; the sweep in reserved() finds the later expiries). */
  renew(holds: LeaseRenewal[], now: number): void {
    for (const r of holds) {
      const h = this.reservations.get(r.project)?.held.get(r.id);
      if (h && h.expires > now) h.expires = Math.max(h.expires, now + r.leaseMs);
    }
  }

  release(s: Settlement): void {
    const b = this.reservations.get(s.project);
    const h = b?.held.get(s.id);
    if (!b || !h) return;
    b.held.delete(s.id);
    b.sum -= h.amount;
    if (b.held.size === 0) this.reservations.delete(s.project);
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
