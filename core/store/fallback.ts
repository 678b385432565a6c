// What a policy set to fail_open uses while the store is unavailable: this process's own accounting. Rate windows
// are counted here alone (each replica then enforces the whole limit by itself); a budget reserves against the
// spend this process last saw in the store plus what it recorded (spooled) since. Every decision is counted and
// logged by the caller.
import { LocalState } from "./local.ts";
import { chargedPeriods } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import type { LeaseRenewal, LedgerEntry, RateCharge, RateResult, Reservation, ReserveResult, Settlement } from "./types.ts";

export class LocalFallback {
  private readonly local = new LocalState();
  /** project\nperiodKey -> spend the store reported at this process's last successful reservation. */
  private readonly seen = new Map<string, bigint>();
  /** project\nperiodKey -> cost of records spooled since (not yet in the store). */
  private readonly spooled = new Map<string, bigint>();

  /** After a reservation the store answered: remember the spend it reported. */
  noteSpent(r: Reservation, res: ReserveResult): void {
    this.seen.set(`${r.project}\n${r.periodKey}`, res.spentPico);
  }

  /** A record went to the spool: its cost counts until the store has it. */
  noteSpooled(e: LedgerEntry): void {
    if (e.costPico === 0n) return;
    const scope = keyScope(e.project, e.keyId);
    for (const p of chargedPeriods(e)) {
      for (const k of [`${e.project}\n${p.key}`, `${scope}\n${p.key}`]) this.spooled.set(k, (this.spooled.get(k) ?? 0n) + e.costPico);
    }
  }

  /** The spool was replayed: the store's spend includes it now. */
  replayed(): void {
    this.spooled.clear();
  }

  reserve(r: Reservation, now: number): ReserveResult {
    const k = `${r.project}\n${r.periodKey}`;
    return this.local.reserve(r, (this.seen.get(k) ?? 0n) + (this.spooled.get(k) ?? 0n), now);
  }

  release(s: Settlement): void {
    this.local.release(s);
  }

  renew(holds: LeaseRenewal[], now: number): void {
    this.local.renew(holds, now);
  }

  rateLimit(charges: RateCharge[], now: number): RateResult {
    return this.local.rateLimit(charges, now);
  }

  rateAdjust(key: string, limit: number, delta: number, now: number): void {
    this.local.rateAdjust(key, limit, delta, now);
  }
}
