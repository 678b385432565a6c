// Store kind `memory`: everything in this process, gone on exit. For tests and throwaway runs. Usage rollups keep
// counting after the oldest records are dropped.
import { LocalState } from "./local.ts";
import { chargedPeriods } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import { MemoryResponseStore } from "./responses-memory.ts";
import { MemoryMemoStore } from "./memo-memory.ts";
import { MemoryApiKeyStore } from "./api-keys-memory.ts";
import { MemoryResponseCacheStore } from "./response-cache-memory.ts";
import { MemoryRollups } from "./rollup-memory.ts";
import { newestFirst, pageOf, planSearch, recordMatches } from "./ledger-search.ts";
import type { LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import type {
  ClaimRenewal, IdempotencyBegin, LeaseRenewal, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse,
} from "./types.ts";

interface Done { hash: string; response: StoredResponse; expires: number }

/** The in-memory ledger keeps about the latest 100 000 records (spend counters keep counting). */
const MAX_ENTRIES = 100_000;

export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  private readonly local = new LocalState();
  private readonly entries: LedgerRecord[] = [];
  private readonly seen = new Set<string>();
  private readonly rollups = new MemoryRollups();
  private readonly spend = new Map<string, bigint>();
  private readonly done = new Map<string, Done>();
  readonly responses = new MemoryResponseStore();
  readonly memos = new MemoryMemoStore();
  readonly apiKeys = new MemoryApiKeyStore();
  readonly responseCache = new MemoryResponseCacheStore();

  async rateLimit(charges: RateCharge[], now: number): Promise<RateResult> {
    return this.local.rateLimit(charges, now);
  }
  async rateAdjust(key: string, limit: number, delta: number, now: number): Promise<void> {
    this.local.rateAdjust(key, limit, delta, now);
  }
  async rateState(windows: { key: string; limit: number }[], now: number): Promise<RateState[]> {
    return this.local.rateState(windows, now);
  }
  async reserved(project: string, periodKey: string, now: number): Promise<bigint> {
    return this.local.reserved(project, periodKey, now);
  }
  async reserve(r: Reservation, now: number): Promise<ReserveResult> {
    return this.local.reserve(r, this.spend.get(`${r.project}\n${r.periodKey}`) ?? 0n, now);
  }
  async release(s: Settlement): Promise<void> {
    this.local.release(s);
  }
  async renewHolds(holds: LeaseRenewal[], now: number): Promise<void> {
    this.local.renew(holds, now);
  }
  async spent(project: string, periodKey: string, _periodStart?: number): Promise<bigint> {
    return this.spend.get(`${project}\n${periodKey}`) ?? 0n;
  }
  async record(entry: LedgerRecord, settle?: Settlement): Promise<void> {
    if (settle) this.local.release(settle);
    if (this.seen.has(entry.generationId)) return;
    this.seen.add(entry.generationId);
    this.entries.push(entry);
    this.rollups.add(entry);
    // Trim in chunks: shifting one record per request would copy the whole array every time.
    if (this.entries.length > MAX_ENTRIES + 10_000) for (const old of this.entries.splice(0, 10_000)) this.seen.delete(old.generationId);
    const scope = keyScope(entry.project, entry.keyId);
    for (const p of chargedPeriods(entry)) {
      for (const k of [`${entry.project}\n${p.key}`, `${scope}\n${p.key}`]) this.spend.set(k, (this.spend.get(k) ?? 0n) + entry.costPico);
    }
  }
  async ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    return this.entries.filter((e) => (!q.project || e.project === q.project) && (!q.since || e.ts >= q.since));
  }
  async usage(q: UsageQuery): Promise<UsageRow[]> {
    return this.rollups.usage(q);
  }
  /** The kept records (the latest 100 000), newest first. */
  async search(q: RequestSearch): Promise<RequestPage> {
    const p = planSearch(q);
    return pageOf(p, this.entries.filter((e) => recordMatches(p, e)).sort(newestFirst).slice(0, p.limit + 1));
  }
  async get(generationId: string): Promise<LedgerRecord | undefined> {
    if (!this.seen.has(generationId)) return undefined;
    return this.entries.find((e) => e.generationId === generationId);
  }
  async idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, now: number): Promise<IdempotencyBegin> {
    return this.local.claim(scope, hash, owner, leaseMs, now, () => {
      const d = this.done.get(scope);
      if (!d) return undefined;
      if (d.expires <= now) {
        this.done.delete(scope);
        return undefined;
      }
      return d.hash === hash ? { state: "done", response: structuredClone(d.response) } : { state: "mismatch" };
    });
  }
  async idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number, now: number): Promise<void> {
    this.done.set(scope, { hash, response: structuredClone(response), expires: now + ttlMs });
    this.local.unclaim(scope, owner);
  }
  async idempotencyRelease(scope: string, owner: string): Promise<void> {
    this.local.unclaim(scope, owner);
  }
  async renewClaims(claims: ClaimRenewal[], now: number): Promise<void> {
    this.local.renewClaims(claims, now);
  }
  async probe(): Promise<void> {}
  async close(): Promise<void> {}
}
