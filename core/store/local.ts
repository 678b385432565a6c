// In-process state shared by the memory and SQLite backends: rate windows, budget reservations and claimed
// idempotency keys. None of it needs to outlive the process (a restart has no requests in flight), so it stays
// off the disk. Only one process may use a SQLite file; several replicas use Redis.
import { gcraAdjust, gcraCharge, readWindow, windowState, type GcraWindow } from "./gcra.ts";
import { periodBounds } from "./periods.ts";
import type { ClaimRenewal, IdempotencyBegin, LeaseRenewal, RateCharge, RateResult, RateState, Reservation, Settlement } from "./types.ts";

/** A budget hold: its amount, its lease, and the UTC day its request was admitted in (the periods its cost is charged to). */
interface Held { amount: bigint; expires: number; day: number }
interface Claim { hash: string; owner: string; expires: number }

const DAY_MS = 86_400_000;

/**
 * A budget scope's holds, whatever period each was made under: one counts against every period containing its
 * admission (a reload may change the budget's period while it runs), so holds are kept per scope, not per period.
 * Every period is made of whole UTC days, so running sums per admission day (normally one or two: today's, and a
 * stream's begun before midnight) answer any period without walking the holds; `total` and the first and last of
 * those days answer it at once while they all lie within the period.
 */
interface ScopeHolds {
  held: Map<string, Held>;
  days: Map<number, { sum: bigint; holds: number }>;
  total: bigint;
  firstDay: number;
  lastDay: number;
  nextExpiry: number;
}

export class LocalState {
  private readonly tats = new Map<string, GcraWindow>();
  /** budget scope (project, or a key's: key-budget.ts) -> held reservations and their running sum. */
  private readonly reservations = new Map<string, ScopeHolds>();
  private readonly claims = new Map<string, Claim>();

  rateLimit(charges: RateCharge[], now: number): RateResult {
    return gcraCharge(this.tats, charges, now);
  }

  rateAdjust(key: string, limit: number, delta: number, now: number): void {
    gcraAdjust(this.tats, key, limit, delta, now);
  }

  /** Charges nothing, but a window read at a changed limit is stored at it, as a charge would (gcra.ts readWindow). */
  rateState(windows: { key: string; limit: number }[], now: number): RateState[] {
    return windows.map((w) => windowState({ ...w, cost: 0 }, readWindow(this.tats, w.key, w.limit, now), now));
  }

  /** What holds made within a budget period still hold; expired leases are swept only once the earliest one is due. */
  reserved(project: string, periodKey: string, now: number): bigint {
    const b = this.reservations.get(project);
    if (!b) return 0n;
    if (now >= b.nextExpiry) sweep(b, now);
    const { start, end } = periodBounds(periodKey);
    if (b.firstDay * DAY_MS >= start && b.lastDay * DAY_MS < end) return b.total;
    let sum = 0n;
    for (const [day, d] of b.days) if (day * DAY_MS >= start && day * DAY_MS < end) sum += d.sum;
    return sum;
  }

  /** Synchronous check-and-hold; `spent` is the period's recorded spend. */
  reserve(r: Reservation, spent: bigint, now: number): { ok: boolean; spentPico: bigint; reservedPico: bigint } {
    const reserved = this.reserved(r.project, r.periodKey, now);
    if (spent + reserved + r.amountPico > r.limitPico) return { ok: false, spentPico: spent, reservedPico: reserved };
    let b = this.reservations.get(r.project);
    if (!b) this.reservations.set(r.project, (b = { held: new Map(), days: new Map(), total: 0n, firstDay: Infinity, lastDay: -Infinity, nextExpiry: Infinity }));
    const expires = now + r.leaseMs;
    const h: Held = { amount: r.amountPico, expires, day: Math.floor((r.at ?? now) / DAY_MS) };
    // The same id held again replaces its hold (as Redis's HSET does), never adds to it.
    const prev = b.held.get(r.id);
    if (prev) forget(b, prev);
    b.held.set(r.id, h);
    count(b, h);
    if (expires < b.nextExpiry) b.nextExpiry = expires;
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
    forget(b, h);
    if (b.held.size === 0) this.reservations.delete(s.project);
  }

  /**
   * Claim a key unless someone holds it; `done` looks up a finished record when nobody does. A held claim is this
   * process's own (inProcess): its owner is alive however long since it was renewed (a paused process, a long GC or
   * a clock jump is no death), and it completes or releases the claim.
   */
  claim(scope: string, hash: string, owner: string, leaseMs: number, now: number, done: () => IdempotencyBegin | undefined): IdempotencyBegin {
    const held = this.claims.get(scope);
    if (held && held.expires > now) return held.hash === hash ? { state: "pending", inProcess: true } : { state: "mismatch" };
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

function count(b: ScopeHolds, h: Held): void {
  b.total += h.amount;
  const d = b.days.get(h.day);
  if (d) {
    d.sum += h.amount;
    d.holds++;
    return;
  }
  b.days.set(h.day, { sum: h.amount, holds: 1 });
  if (h.day < b.firstDay) b.firstDay = h.day;
  if (h.day > b.lastDay) b.lastDay = h.day;
}

function forget(b: ScopeHolds, h: Held): void {
  b.total -= h.amount;
  const d = b.days.get(h.day)!;
  d.sum -= h.amount;
  if (--d.holds > 0) return;
  b.days.delete(h.day);
  b.firstDay = Infinity;
  b.lastDay = -Infinity;
  for (const day of b.days.keys()) {
    if (day < b.firstDay) b.firstDay = day;
    if (day > b.lastDay) b.lastDay = day;
  }
}

/** Drop the holds whose lease ran out (a crashed request's), and find the next one due. */
function sweep(b: ScopeHolds, now: number): void {
  b.nextExpiry = Infinity;
  for (const [id, h] of b.held) {
    if (h.expires <= now) {
      b.held.delete(id);
      forget(b, h);
    } else if (h.expires < b.nextExpiry) b.nextExpiry = h.expires;
  }
}
