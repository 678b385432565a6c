// In-process state shared by the memory and SQLite backends: rate windows, budget reservations and claimed
// idempotency keys. None of it needs to outlive the process (a restart has no requests in flight), so it stays
// off the disk. Only one process may use a SQLite file; several replicas use Redis.
import { gcraAdjust, gcraCharge } from "./gcra.ts";
import type { IdempotencyBegin, RateCharge, RateResult, Reservation, Settlement } from "./types.ts";

interface Held { amount: bigint; expires: number }
interface Claim { hash: string; owner: string; expires: number }

export class LocalState {
  private readonly tats = new Map<string, number>();
  private readonly reservations = new Map<string, Map<string, Held>>();
  private readonly claims = new Map<string, Claim>();

  rateLimit(charges: RateCharge[], now: number): RateResult {
    return gcraCharge(this.tats, charges, now);
  }

  rateAdjust(key: string, limit: number, delta: number, now: number): void {
    gcraAdjust(this.tats, key, limit, delta, now);
  }

  /** Reserved amount for a budget period, dropping expired leases. */
  reserved(project: string, periodKey: string, now: number): bigint {
    const held = this.reservations.get(`${project}\n${periodKey}`);
    let sum = 0n;
    if (!held) return sum;
    for (const [id, h] of held) {
      if (h.expires <= now) held.delete(id);
      else sum += h.amount;
    }
    return sum;
  }

  /** Synchronous check-and-hold; `spent` is the period's recorded spend. */
  reserve(r: Reservation, spent: bigint, now: number): { ok: boolean; spentPico: bigint; reservedPico: bigint } {
    const reserved = this.reserved(r.project, r.periodKey, now);
    if (spent + reserved + r.amountPico > r.limitPico) return { ok: false, spentPico: spent, reservedPico: reserved };
    const k = `${r.project}\n${r.periodKey}`;
    let held = this.reservations.get(k);
    if (!held) this.reservations.set(k, (held = new Map()));
    held.set(r.id, { amount: r.amountPico, expires: now + r.leaseMs });
    return { ok: true, spentPico: spent, reservedPico: reserved + r.amountPico };
  }

  release(s: Settlement): void {
    const k = `${s.project}\n${s.periodKey}`;
    const held = this.reservations.get(k);
    held?.delete(s.id);
    if (held && held.size === 0) this.reservations.delete(k);
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

  unclaim(scope: string, owner: string): void {
    if (this.claims.get(scope)?.owner === owner) this.claims.delete(scope);
  }
}
