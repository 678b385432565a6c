// Store kind `redis` with `store.ledger: postgres`: the hot, shared state (rate windows, reservations, spend
// counters, idempotency, stored responses) stays in Redis; the usage ledger and its rollups go to Postgres. A record
// is settled in Redis first (spend and reservation, once per generation id: RECORD_SPEND), then spooled for Postgres
// on this replica's disk before record() resolves — never waiting on Postgres. If Redis fails, nothing was spooled
// for Postgres and the guard keeps the whole record (its own spool) to replay both steps; a replay is idempotent in
// both. When Redis loses its state, spend is rebuilt from Postgres's rollups (redis.ts, claimEpoch).
import type { Registry } from "prom-client";
import type { Logger } from "../log.ts";
import type { RedisStore } from "./redis.ts";
import type { PostgresLedger } from "./postgres-ledger.ts";
import { importRedisLedger } from "./redis-ledger-import.ts";
import type {
  ClaimRenewal, IdempotencyBegin, LeaseRenewal, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse, VerifyOptions,
} from "./types.ts";
import type { LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";

export class SplitLedgerStore implements Store {
  readonly kind = "redis" as const;

  constructor(readonly hot: RedisStore, readonly ledgerStore: PostgresLedger, private readonly log?: Logger) {}

  /** The records an earlier Redis-only ledger left in its stream, going into Postgres (redis-ledger-import.ts). */
  importing: Promise<number> | undefined;
  private readonly stopImport = new AbortController();

  /** Serving: import the Redis ledger stream's records in the background (once; see redis-ledger-import.ts). */
  importEarlierRecords(): void {
    this.importing ??= importRedisLedger(this.hot, this.ledgerStore, this.log, this.stopImport.signal);
  }

  get responses() { return this.hot.responses; }
  get memos() { return this.hot.memos; }
  get apiKeys() { return this.hot.apiKeys; }
  get responseCache() { return this.hot.responseCache; }

  rateLimit(charges: RateCharge[], now: number): Promise<RateResult> { return this.hot.rateLimit(charges, now); }
  rateAdjust(key: string, limit: number, delta: number, now: number): Promise<void> { return this.hot.rateAdjust(key, limit, delta, now); }
  reserve(r: Reservation, now: number): Promise<ReserveResult> { return this.hot.reserve(r, now); }
  release(s: Settlement): Promise<void> { return this.hot.release(s); }
  renewHolds(holds: LeaseRenewal[], now: number): Promise<void> { return this.hot.renewHolds(holds, now); }
  spent(project: string, periodKey: string, periodStart: number): Promise<bigint> { return this.hot.spent(project, periodKey, periodStart); }
  rateState(windows: { key: string; limit: number }[], now: number): Promise<RateState[]> { return this.hot.rateState(windows, now); }
  reserved(project: string, periodKey: string, now: number): Promise<bigint> { return this.hot.reserved(project, periodKey, now); }

  async record(entry: LedgerRecord, settle?: Settlement): Promise<void> {
    await this.hot.record(entry, settle);
    const kept = await this.ledgerStore.append(entry);
    if (kept === "memory") {
      this.log?.error("ledger record kept in memory only (the spool's disk failed); lost if this process dies before Postgres has it",
        { generationId: entry.generationId, requestId: entry.requestId });
    }
  }

  ledger(q: LedgerQuery): Promise<LedgerEntry[]> { return this.ledgerStore.ledger(q); }
  usage(q: UsageQuery): Promise<UsageRow[]> { return this.ledgerStore.usage(q); }
  search(q: RequestSearch): Promise<RequestPage> { return this.ledgerStore.search(q); }
  get(generationId: string): Promise<LedgerRecord | undefined> { return this.ledgerStore.get(generationId); }

  idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, now: number, renewEveryMs?: number): Promise<IdempotencyBegin> {
    void now; // Redis uses its own clock
    return this.hot.idempotencyBegin(scope, hash, owner, leaseMs, undefined, renewEveryMs);
  }
  idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number, now: number): Promise<void> {
    void now;
    return this.hot.idempotencyComplete(scope, hash, owner, response, ttlMs);
  }
  idempotencyRelease(scope: string, owner: string): Promise<void> { return this.hot.idempotencyRelease(scope, owner); }
  renewClaims(claims: ClaimRenewal[], now: number): Promise<void> { return this.hot.renewClaims(claims, now); }

  /** Redis only: a Postgres outage delays records, it never makes the store (or /readyz) unavailable. */
  probe(): Promise<void> { return this.hot.probe(); }
  verify(o: VerifyOptions): Promise<void> { return this.hot.verify(o); }
  onConnectionLost(fn: () => void): void { this.hot.onConnectionLost(fn); }

  registerMetrics(registry: Registry): void { this.ledgerStore.registerMetrics(registry); }

  async close(): Promise<void> {
    this.stopImport.abort();
    await this.importing;
    await this.ledgerStore.close();
    await this.hot.close();
  }
}
