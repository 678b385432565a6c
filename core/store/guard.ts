// The store as requests see it: every call bounded by store.timeout_ms. A store that fails is marked unavailable at
// once; one that only did not answer in time is probed first (a longer bound) and marked so if the probe fails too.
// While unavailable, later calls do not wait on it; requests get 503 STORE_UNAVAILABLE with
// Retry-After, or the policy's fail_open fallback (store.when_unavailable) — until a probe (a write) succeeds.
// Nothing answered is lost meanwhile: a ledger record the store cannot take goes to the local spool (fsync'd before
// the response completes) and is replayed into the store, exactly once, before the store counts as up again, after
// the reservations and idempotency claims that failed requests left behind have been given back. A record no store
// can hold (rejected-ledger.ts) is set aside, never spooled or retried: one bad record never holds the store down.
import { openSync, closeSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Registry } from "prom-client";
import type { StoreConfig } from "../generated/types/gateway.ts";
import type { Logger } from "../log.ts";
import { GatewayError as GatewayErrorClass, type GatewayError } from "../errors.ts";
import type { LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import { LocalFallback } from "./fallback.ts";
import { StoreMetrics } from "./store-metrics.ts";
import type { Spool } from "./spool.ts";
import { setAside, unstorable } from "./rejected-ledger.ts";
import { StoreStateLostError, StoreTimeoutError, storeUnavailable, within, type UnavailableReason } from "./unavailable.ts";
import type { ResponseOwner, ResponseRecord, ResponseStore, StoredItem } from "./responses-types.ts";
import type { MemoStore } from "./memo-types.ts";
import type { ApiKeyStore } from "./api-keys-types.ts";
import type { ResponseCacheStore } from "./response-cache-types.ts";
import type {
  ClaimRenewal, IdempotencyBegin, LeaseRenewal, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse,
} from "./types.ts";
import { makeDirs } from "./make-dirs.ts";

/** A ledger record as it waits in the spool (money as a decimal string: JSON has no bigint). */
export interface SpooledRecord {
  entry: Omit<LedgerRecord, "costPico"> & { costPico: string };
  settle?: Settlement;
}

export interface GuardOptions {
  /** The live `store:` config (timeouts and fallbacks follow a reload). */
  config: () => StoreConfig;
  log: Logger;
  registry: Registry;
  spool: Spool<SpooledRecord>;
  /**
   * Where ledger records go at close when neither the store nor the spool can take them (the config file's
   * directory); stderr when unset or not writable.
   */
  fallbackDir?: string;
  /** How long close() keeps trying the store and the spool before giving such records up (default 5 s). */
  lastChanceMs?: number;
}

export interface StoreStatus {
  up: boolean;
  kind: string;
  /** While down: why, since when (ISO), and the last error. */
  reason?: UnavailableReason;
  since?: string;
  error?: string;
  spool: { records: number; oldest_age_seconds: number };
  pending_releases: number;
}

type Policy = "budget" | "rate_limit" | "idempotency";

const DEFAULT_TIMEOUT_MS = 300;
const DEFAULT_PROBE_MS = 500;
/** Longest wait for an operator-plane read of the ledger (usage, search, get). */
const READ_TIMEOUT_MS = 15_000;
/** A readiness check re-probes a store that looks up once its last probe is older than this. */
const READY_PROBE_AGE_MS = 1000;
/** At close, how long the store and the spool get to take records that are held only in memory. */
const LAST_CHANCE_MS = 5000;

/** The store cannot serve as configured: `start` says so in one line, no stack. */
export class StoreRefusedError extends Error {}

export class GuardedStore implements Store {
  readonly kind: Store["kind"];
  readonly responses: ResponseStore;
  readonly memos: MemoStore;
  readonly apiKeys: ApiKeyStore;
  readonly responseCache: ResponseCacheStore;
  readonly metrics: StoreMetrics;
  private up = true;
  private downSince = 0;
  private reason: UnavailableReason = "error";
  private lastError = "";
  private probeTimer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private lastProbeOk = 0;
  private closed = false;
  private readonly fallback = new LocalFallback();
  /** Reservations whose fate the store could not confirm: released once it answers (project\nperiod\nid). */
  private readonly pendingBudget = new Map<string, Settlement>();
  /** Idempotency claims to give back once the store answers (scope\nowner). */
  private readonly pendingClaims = new Map<string, { scope: string; owner: string }>();
  /** Claims granted by fail_open while the store was down: nothing of theirs is in the store. */
  private readonly localClaims = new Set<string>();
  /** Records held only in memory that close() or saveHeldNow() has written out (file, or "stderr"), by id. */
  private writtenOut: { to: string; ids: Set<string> } | undefined;
  /** store.probe_interval_ms as at start (read only then, core/config/restart-only.ts): a reload waits for a restart. */
  private readonly probeMs: number;

  /** `inner`: the backend itself (its file, its connection), for the operator plane and tests. */
  constructor(readonly inner: Store, private readonly o: GuardOptions) {
    this.kind = inner.kind;
    this.probeMs = o.config().probe_interval_ms ?? DEFAULT_PROBE_MS;
    this.metrics = new StoreMetrics(o.registry, o.spool, () => this.pendingBudget.size + this.pendingClaims.size);
    this.metrics.up.set(1);
    this.responses = this.guardResponses(inner.responses);
    this.memos = this.guardMemos(inner.memos);
    this.apiKeys = this.guardApiKeys(inner.apiKeys);
    this.responseCache = this.guardResponseCache(inner.responseCache);
    // A lost connection: unavailable at once, and when it is back, not trusted until a probe has checked it still
    // holds the gateway's state.
    inner.onConnectionLost?.(() => { if (!this.closed) this.fail("connection", new Error("connection to the store lost")); });
  }

  /** At start: replay what an earlier process left in the spool (a store that fails now is probed until it answers). */
  async start(): Promise<void> {
    await this.checkSpoolDir();
    if (!this.o.spool.size) return;
    this.o.log.info("store: replaying ledger records left in the spool", { records: this.o.spool.size });
    try {
      await this.recover();
    } catch (err) {
      this.fail("replay", err);
    }
  }

  /**
   * The spool is where answered requests' records go while the store is down: a spool_dir that cannot be written
   * would keep them in memory only, lost at the next stop. With require_persistence (the default) that refuses the
   * start; otherwise it is said once, loudly. A memory store never spools (it cannot fail), so it is not checked.
   */
  private async checkSpoolDir(): Promise<void> {
    const cfg = this.o.config();
    if (this.kind === "memory") return;
    const dir = this.o.spool.dir;
    const probe = join(dir, `.write-probe.${process.pid}`);
    try {
      makeDirs(dir);
      closeSync(openSync(probe, "w"));
      unlinkSync(probe);
    } catch (err) {
      const why = `store.spool_dir ${dir} cannot be written (${(err as Error).message}): ledger records of answered requests ` +
        "would be kept in memory only while the store is unavailable, and lost when the gateway stops";
      if (cfg.require_persistence ?? true) {
        this.closed = true;
        await this.inner.close().catch(() => {}); // the start fails: nothing else will close it
        throw new StoreRefusedError(`${why}. Make it writable, or set store.require_persistence: false to accept that`);
      }
      this.o.log.error(why, { spoolDir: dir, error: String(err) });
    }
  }

  private get timeoutMs(): number {
    return this.o.config().timeout_ms ?? DEFAULT_TIMEOUT_MS;
  }

  private get retryAfterS(): number {
    return Math.max(1, Math.ceil(this.probeMs / 1000));
  }

  private policy(p: Policy): "fail_open" | "fail_closed" {
    return this.o.config().when_unavailable?.[p] ?? (p === "rate_limit" ? "fail_open" : "fail_closed");
  }

  /** One bounded call; a failure marks the store down and becomes 503 STORE_UNAVAILABLE. */
  private call<T>(op: string, f: () => Promise<T>): Promise<T> {
    if (!this.up) {
      this.metrics.failures.inc({ operation: op, reason: "down" });
      return Promise.reject(notSent(this.unavailable()));
    }
    return within(f(), this.timeoutMs, op).catch((err) => {
      if (err instanceof StoreTimeoutError) this.suspect(op, err);
      else this.fail(op, err);
      throw this.unavailable(err);
    });
  }

  /**
   * An optional read, bounded like any call, whose failure says nothing about the store (INFO refused by an ACL, a
   * managed Redis that renames it): counted, never marking the store down or suspect.
   */
  private ask<T>(op: string, f: () => Promise<T>): Promise<T> {
    if (!this.up) {
      this.metrics.failures.inc({ operation: op, reason: "down" });
      return Promise.reject(notSent(this.unavailable()));
    }
    return within(f(), this.timeoutMs, op).catch((err) => {
      this.metrics.failures.inc({ operation: op, reason: reasonOf(err) });
      throw err;
    });
  }

  /**
   * A call that only took too long (a loaded disk's fsync, a busy server) is not yet an outage: probe now, with a
   * longer bound, and mark the store down only if the probe fails too. The call itself has already given up.
   */
  private suspect(op: string, err: StoreTimeoutError): void {
    this.metrics.failures.inc({ operation: op, reason: "timeout" });
    this.lastError = err.message;
    void this.check(Math.max(this.timeoutMs * 4, 1000));
  }

  private unavailable(cause?: unknown): GatewayError {
    return storeUnavailable(this.kind, cause === undefined ? (this.reason === "state_lost" ? "state_lost" : "down") : reasonOf(cause), this.retryAfterS, cause);
  }

  /** Mark the store down (once per outage, with one log line) and probe it until it answers. */
  private fail(op: string, err: unknown): void {
    const reason = reasonOf(err);
    this.metrics.failures.inc({ operation: op, reason });
    this.lastError = String((err as Error)?.message ?? err);
    if (this.up || (reason === "state_lost" && this.reason !== "state_lost")) {
      this.up = false;
      this.downSince ||= Date.now();
      this.reason = reason;
      this.metrics.up.set(0);
      this.o.log.error(reason === "state_lost" ? "store has lost the gateway's state; budgets are refused until an operator acts" : "store unavailable; probing until it answers",
        { store: this.kind, operation: op, reason, error: this.lastError });
    }
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.closed) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.check();
    }, this.probeMs);
    this.probeTimer.unref();
  }

  /** One probe (a write), then, while down, the replay; up again only when both succeeded. One at a time. */
  private check(boundMs = this.timeoutMs): Promise<void> {
    return (this.probing ??= (async () => {
      try {
        await within(this.inner.probe(), boundMs, "probe");
        this.lastProbeOk = Date.now();
        if (this.up && (this.o.spool.size || this.pendingBudget.size || this.pendingClaims.size)) {
          // Spooled or held while the store stayed up (a call that was only slow): hand them over now.
          await this.recover();
        } else if (!this.up) {
          // Requests keep spooling while the replay runs: up only once nothing is left, checked in the same tick.
          do await this.recover();
          while (this.o.spool.size || this.pendingBudget.size || this.pendingClaims.size);
          const downMs = Date.now() - this.downSince;
          this.up = true;
          this.downSince = 0;
          this.metrics.up.set(1);
          this.o.log.info("store available again", { store: this.kind, downMs, spooled: this.o.spool.size });
        }
      } catch (err) {
        this.fail("probe", err);
      } finally {
        this.probing = undefined;
      }
    })());
  }

  /** Give back what failed requests left held, then replay the spool into the store. */
  private async recover(): Promise<void> {
    const t = this.timeoutMs;
    // In batches, all at once (pipelined on Redis); what a batch gave back is forgotten only once it has.
    while (this.pendingBudget.size) {
      const batch = [...this.pendingBudget].slice(0, 500);
      await within(Promise.all(batch.map(([, s]) => this.inner.release(s))), Math.max(t * 4, 2000), "release");
      for (const [k] of batch) this.pendingBudget.delete(k);
    }
    while (this.pendingClaims.size) {
      const batch = [...this.pendingClaims].slice(0, 500);
      await within(Promise.all(batch.map(([, c]) => this.inner.idempotencyRelease(c.scope, c.owner))), Math.max(t * 4, 2000), "idempotency_release");
      for (const [k] of batch) this.pendingClaims.delete(k);
    }
    const replayed = await this.o.spool.drain((batch) => this.replay(batch, Math.max(t * 4, 2000)));
    if (this.o.spool.size === 0) this.fallback.replayed();
    if (replayed) this.o.log.info("store: spooled ledger records replayed", { store: this.kind, records: replayed });
  }

  /**
   * Replay spooled records: one batch at once (Redis pipelines them, SQLite commits them in one transaction); recording
   * is idempotent per generation id, so a record the store had already taken (a call that timed out late) is not
   * counted twice. A batch that fails, not by timing out, is halved until the record that fails alone is found; if the
   * store then answers a probe and refuses that record once more, the record is the cause: it is set aside and the
   * replay goes on. A store that answers no probe keeps everything spooled.
   */
  private async replay(batch: SpooledRecord[], ms: number): Promise<void> {
    const writable: SpooledRecord[] = [];
    for (const r of batch) {
      const why = unstorableSpooled(r);
      if (why) await this.rejectSpooled(r, why, ms);
      else writable.push(r);
    }
    if (!writable.length) return;
    try {
      await within(Promise.all(writable.map((r) => this.inner.record(fromSpool(r.entry), r.settle))), ms, "replay");
      this.metrics.replayed.inc(writable.length);
      return;
    } catch (err) {
      if (!recordMayBeTheCause(err)) throw err;
      if (writable.length > 1) {
        const half = Math.ceil(writable.length / 2);
        await this.replay(writable.slice(0, half), ms);
        await this.replay(writable.slice(half), ms);
        return;
      }
    }
    const r = writable[0]!;
    await within(this.inner.probe(), ms, "probe"); // fails: the store's fault, the record stays spooled
    try {
      await within(this.inner.record(fromSpool(r.entry), r.settle), ms, "replay");
      this.metrics.replayed.inc();
    } catch (err) {
      if (!recordMayBeTheCause(err)) throw err;
      await this.rejectSpooled(r, String((err as Error)?.message ?? err), ms);
    }
  }

  /** A spooled record set aside; its reservation is given back now (or once the store answers). */
  private async rejectSpooled(r: SpooledRecord, why: string, ms: number): Promise<void> {
    await this.reject(r, why);
    const s = r.settle;
    if (s) await within(this.inner.release(s), ms, "release").catch(() => this.pendingBudget.set(`${s.project}\n${s.periodKey}\n${s.id}`, s));
  }

  /**
   * Set a record aside (rejected-ledger.ts), logged at error and counted. A record the file cannot take either is
   * logged whole, so it is not lost without a trace.
   */
  private async reject(r: SpooledRecord, why: string): Promise<void> {
    const ids = { generationId: r.entry.generationId, requestId: r.entry.requestId, project: r.entry.project };
    this.metrics.rejected.inc();
    try {
      const file = await setAside(this.o.spool.dir, r, why);
      this.o.log.error("ledger record the store cannot hold: set aside, not counted in spend", { ...ids, file, error: why });
    } catch (err) {
      this.o.log.error("ledger record the store cannot hold, and the rejected file cannot be written: dropped", { ...ids, error: why, fileError: String(err), record: JSON.stringify(r) });
    }
  }

  /** For /readyz: probe a store that looks up if the last probe is old; report what is known. */
  async status(): Promise<StoreStatus> {
    if (this.up && Date.now() - this.lastProbeOk > READY_PROBE_AGE_MS) await this.check();
    const oldest = this.o.spool.oldestAt;
    return {
      up: this.up,
      kind: this.kind,
      ...(this.up ? {} : { reason: this.reason, since: new Date(this.downSince).toISOString(), error: this.lastError }),
      spool: { records: this.o.spool.size, oldest_age_seconds: oldest === undefined ? 0 : Math.round((Date.now() - oldest) / 100) / 10 },
      pending_releases: this.pendingBudget.size + this.pendingClaims.size,
    };
  }

  /** A fail_open decision: counted and logged, every one. */
  private decided(policy: Policy, allowed: boolean, fields: Record<string, unknown>): void {
    const decision = allowed ? "allowed_locally" : "refused_locally";
    this.metrics.decisions.inc({ policy, decision });
    this.o.log.warn("store unavailable: decided on this process's own accounting", { policy, decision, ...fields });
  }

  private refused(policy: Policy): void {
    this.metrics.decisions.inc({ policy, decision: "refused_unavailable" });
  }

  async rateLimit(charges: RateCharge[], now: number): Promise<RateResult> {
    try {
      return await this.call("rate_limit", () => this.inner.rateLimit(charges, now));
    } catch (err) {
      if (this.policy("rate_limit") === "fail_closed") {
        this.refused("rate_limit");
        throw err;
      }
      const r = this.fallback.rateLimit(charges, now);
      this.decided("rate_limit", r.ok, { windows: charges.map((c) => c.key) });
      return r;
    }
  }

  async rateAdjust(key: string, limit: number, delta: number, now: number): Promise<void> {
    if (!this.up && this.policy("rate_limit") === "fail_open") return this.fallback.rateAdjust(key, limit, delta, now);
    await this.call("rate_adjust", () => this.inner.rateAdjust(key, limit, delta, now));
  }

  async reserve(r: Reservation, now: number): Promise<ReserveResult> {
    try {
      const res = await this.call("reserve", () => this.inner.reserve(r, now));
      this.fallback.noteSpent(r, res);
      return res;
    } catch (err) {
      // A reservation sent may still land (a call that timed out late): give it back once the store answers.
      if (!NOT_SENT.has(err as object)) this.pendingBudget.set(`${r.project}\n${r.periodKey}\n${r.id}`, { project: r.project, periodKey: r.periodKey, id: r.id });
      if (this.policy("budget") === "fail_closed") {
        this.refused("budget");
        throw err;
      }
      const res = this.fallback.reserve(r, now);
      this.decided("budget", res.ok, { project: r.project, period: r.periodKey, spentPico: String(res.spentPico), reservedPico: String(res.reservedPico) });
      return res;
    }
  }

  /** Never fails: a release the store cannot take now is made once it answers. */
  async release(s: Settlement): Promise<void> {
    this.fallback.release(s);
    try {
      await this.call("release", () => this.inner.release(s));
    } catch {
      this.pendingBudget.set(`${s.project}\n${s.periodKey}\n${s.id}`, s);
    }
  }

  /** Renews what the fallback holds too (holds made while the store was down); the next sweep retries a failure. */
  async renewHolds(holds: LeaseRenewal[], now: number): Promise<void> {
    this.fallback.renew(holds, now);
    await this.call("renew", () => this.inner.renewHolds(holds, now));
  }

  spent(project: string, periodKey: string, periodStart: number): Promise<bigint> {
    return this.call("spent", () => this.inner.spent(project, periodKey, periodStart));
  }

  reserved(project: string, periodKey: string, now: number): Promise<bigint> {
    return this.call("reserved", () => this.inner.reserved(project, periodKey, now));
  }

  rateState(windows: { key: string; limit: number }[], now: number): Promise<RateState[]> {
    return this.call("rate_state", () => this.inner.rateState(windows, now));
  }

  /**
   * Never fails for lack of a store: the provider has answered, so the record goes to the spool (durably, before
   * this resolves) when the store cannot take it, and reaches the store when it is back.
   */
  async record(entry: LedgerRecord, settle?: Settlement): Promise<void> {
    if (settle) this.fallback.release(settle);
    const why = unstorable(entry);
    if (why) {
      // Not the store's failure: no store can hold it, and spooling it would fail the replay.
      await this.reject({ entry: { ...entry, costPico: String(entry.costPico) }, settle }, why);
      if (settle) await this.release(settle);
      return;
    }
    try {
      return await this.call("record", () => this.inner.record(entry, settle));
    } catch {
      // Spooled below.
    }
    this.fallback.noteSpooled(entry);
    const kept = await this.o.spool.append(entry.generationId, { entry: { ...entry, costPico: entry.costPico.toString() }, settle });
    this.metrics.spooled.inc({ kept });
    if (kept === "memory") {
      this.o.log.error("ledger record kept in memory only (the spool's disk failed too); lost if this process dies before the store is back",
        { generationId: entry.generationId, requestId: entry.requestId });
    }
    this.scheduleProbe();
  }

  ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    return this.call("ledger", () => this.inner.ledger(q));
  }

  /**
   * The operator plane's reads (usage from rollups, search, one record): bounded by READ_TIMEOUT_MS, longer than a
   * request's store call since a report may read a year of rollups. A read that fails or is slow is the caller's 503,
   * never a reason to mark the store down (requests do not wait on it); tried even while the store is down, since
   * the ledger may live elsewhere (store.ledger: postgres).
   */
  private read<T>(op: string, f: () => Promise<T>): Promise<T> {
    return within(f(), READ_TIMEOUT_MS, op).catch((err) => {
      if (err instanceof GatewayErrorClass) throw err; // a query the reader refused (400), or its own 503
      this.metrics.failures.inc({ operation: op, reason: reasonOf(err) });
      throw storeUnavailable(this.kind, reasonOf(err), this.retryAfterS, err);
    });
  }

  usage(q: UsageQuery): Promise<UsageRow[]> {
    return this.read("usage", () => this.inner.usage(q));
  }

  search(q: RequestSearch): Promise<RequestPage> {
    return this.read("search", () => this.inner.search(q));
  }

  get(generationId: string): Promise<LedgerRecord | undefined> {
    return this.read("get", () => this.inner.get(generationId));
  }

  async idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, now: number, renewEveryMs?: number): Promise<IdempotencyBegin> {
    try {
      return await this.call("idempotency_begin", () => this.inner.idempotencyBegin(scope, hash, owner, leaseMs, now, renewEveryMs));
    } catch (err) {
      if (!NOT_SENT.has(err as object)) this.pendingClaims.set(`${scope}\n${owner}`, { scope, owner });
      if (this.policy("idempotency") === "fail_closed") {
        this.refused("idempotency");
        throw err;
      }
      this.localClaims.add(`${scope}\n${owner}`);
      this.decided("idempotency", true, { scope });
      return { state: "new" };
    }
  }

  async idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number, now: number): Promise<void> {
    if (this.localClaims.delete(`${scope}\n${owner}`)) return; // never claimed in the store: nothing to complete
    await this.call("idempotency_complete", () => this.inner.idempotencyComplete(scope, hash, owner, response, ttlMs, now));
  }

  /** Never fails: a claim the store cannot give back now is given back once it answers. */
  async idempotencyRelease(scope: string, owner: string): Promise<void> {
    const k = `${scope}\n${owner}`;
    if (this.localClaims.delete(k)) return;
    try {
      await this.call("idempotency_release", () => this.inner.idempotencyRelease(scope, owner));
    } catch {
      this.pendingClaims.set(k, { scope, owner });
    }
  }

  /** Claims granted while the store was down are not in it: only the others are renewed; the next sweep retries a failure. */
  async renewClaims(claims: ClaimRenewal[], now: number): Promise<void> {
    const held = claims.filter((c) => !this.localClaims.has(`${c.scope}\n${c.owner}`));
    if (held.length) await this.call("idempotency_renew", () => this.inner.renewClaims(held, now));
  }

  /** Probe now; rejects with STORE_UNAVAILABLE when the store is (still) down. */
  async probe(): Promise<void> {
    await this.check();
    if (!this.up) throw this.unavailable();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probeTimer);
    await this.probing;
    if (this.up && (this.o.spool.size || this.pendingBudget.size || this.pendingClaims.size)) {
      await this.recover().catch((err) => this.o.log.warn("store: spool not replayed before closing; the next start replays it", { error: String(err) }));
    }
    await this.o.spool.close();
    let unsaved = await this.unsavedRecords();
    let lost: UnsavedRecordsError | undefined;
    if (unsaved.length) {
      // Written out before the last chance, not after: a second signal or a SIGKILL during the wait must not lose them.
      this.writeOut(unsaved, "before");
      unsaved = await this.lastChance(unsaved);
      await this.o.spool.close();
      lost = this.settleWrittenOut(unsaved);
    }
    // A store on a disk gone read-only may fail to close (its last checkpoint); the shutdown goes on.
    await this.inner.close().catch((err) => this.o.log.warn("store: close failed", { store: this.kind, error: String(err) }));
    if (lost) throw lost; // the process must not exit 0 as if nothing was lost
  }

  /**
   * For an exit that cannot wait (a second signal during shutdown): write out, synchronously, the records held only
   * in memory that are not written out yet. Where they went and their ids, or undefined when nothing was held.
   */
  saveHeldNow(): { writtenTo: string; generationIds: string[] } | undefined {
    const held = this.o.spool.heldInMemory();
    if (!held.length) return undefined;
    const w = this.writtenOut;
    if (!w || held.some((r) => !w.ids.has(r.entry.generationId))) this.writeOut(held, "exit");
    return { writtenTo: this.writtenOut!.to, generationIds: held.map((r) => r.entry.generationId) };
  }

  /** The spooled records on no disk (the spool's writes failed), after one more try to write them there. */
  private unsavedRecords(): Promise<SpooledRecord[]> {
    return this.o.spool.saveHeld();
  }

  /**
   * Records held only in memory at close: the store (probe, then replay) and the spool's disk get until
   * lastChanceMs to take them, tried every probe interval. What is still held then is returned.
   */
  private async lastChance(held: SpooledRecord[]): Promise<SpooledRecord[]> {
    const ms = this.o.lastChanceMs ?? LAST_CHANCE_MS;
    const end = Date.now() + ms;
    this.o.log.warn("store: ledger records held in memory only at shutdown; trying the store and the spool once more", { records: held.length, ms });
    for (;;) {
      await this.check(Math.max(this.timeoutMs * 4, 1000));
      // Replayed into the store by the check, or written to the spool's disk now: none is left.
      const left = await this.o.spool.saveHeld();
      if (!left.length) return [];
      const wait = Math.min(this.probeMs, end - Date.now());
      if (wait <= 0) return left;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /**
   * Records of answered requests that neither the store nor the spool can take: said at error with their ids, and
   * written out (spool lines, beside the config, else on stderr) so they can be replayed: a file moved into spool_dir
   * is adopted and replayed by the next start. Synchronous, fsync'd. `when`: before the last chance, or at an exit
   * that cannot wait for it.
   */
  private writeOut(records: SpooledRecord[], when: "before" | "exit"): void {
    const at = Date.now();
    const lines = records.map((r) => JSON.stringify({ k: r.entry.generationId, t: at, v: r }) + "\n").join("");
    const file = this.writeFile(lines, this.writtenOut?.to);
    if (!file) process.stderr.write(lines);
    this.writtenOut = { to: file ?? "stderr", ids: new Set(records.map((r) => r.entry.generationId)) };
    const msg = when === "before"
      ? "ledger records of answered requests are held in memory only (the store is unavailable and the spool cannot be written): written out for a replay; trying the store and the spool once more"
      : "ledger records of answered requests held in memory only, written out for a replay at an immediate exit (the store is unavailable and the spool cannot be written)";
    this.o.log.error(msg, { store: this.kind, records: records.length, generationIds: [...this.writtenOut.ids], ...this.whereFields(file) });
  }

  /** The lines into the fallback file (`over`: replaced whole, by a rename); its path, or undefined when it cannot be. */
  private writeFile(lines: string, over?: string): string | undefined {
    if (!this.o.fallbackDir) return undefined;
    const f = over && over !== "stderr" ? over : join(this.o.fallbackDir, `ledger.${process.pid}.unsaved-${Date.now()}.jsonl`);
    try {
      writeFileSync(`${f}.tmp`, lines, { flush: true });
      renameSync(`${f}.tmp`, f);
      return f;
    } catch {
      try {
        unlinkSync(`${f}.tmp`);
      } catch {
        // never written
      }
      return undefined;
    }
  }

  private whereFields(file: string | undefined): Record<string, string> {
    return file ? { file, replay: `move it into ${this.o.spool.dir} and start the gateway: it is replayed into the store` } : { writtenTo: "stderr" };
  }

  /**
   * After the last chance: a file of records the store or the spool took after all is removed (one left by a kill
   * before this point only replays records the store already has, which it skips); one holding more than is still
   * unsaved is rewritten with just those. The error to fail the close with when records are still unsaved.
   */
  private settleWrittenOut(unsaved: SpooledRecord[]): UnsavedRecordsError | undefined {
    const w = this.writtenOut!;
    const file = w.to === "stderr" ? undefined : w.to;
    if (!unsaved.length) {
      if (file) {
        try {
          unlinkSync(file);
        } catch {
          // gone already
        }
      }
      this.writtenOut = undefined;
      this.o.log.info("store: the held ledger records were saved after all", { store: this.kind, records: w.ids.size, ...(file ? { removed: file } : {}) });
      return undefined;
    }
    if (file && unsaved.length < w.ids.size) {
      const at = Date.now();
      if (this.writeFile(unsaved.map((r) => JSON.stringify({ k: r.entry.generationId, t: at, v: r }) + "\n").join(""), file)) {
        this.writtenOut = { to: file, ids: new Set(unsaved.map((r) => r.entry.generationId)) };
      }
    }
    this.o.log.error("ledger records of answered requests could not be saved: the store is unavailable and the spool cannot be written", {
      store: this.kind, records: unsaved.length, generationIds: unsaved.map((r) => r.entry.generationId), ...this.whereFields(file),
    });
    return new UnsavedRecordsError(unsaved.length, w.to);
  }

  private guardMemos(m: MemoStore): MemoStore {
    return {
      put: (key: string, value: string, ttlMs: number, now: number) => this.call("memos_put", () => m.put(key, value, ttlMs, now)),
      get: (keys: string[], now: number) => this.call("memos_get", () => m.get(keys, now)),
    };
  }

  private guardApiKeys(k: ApiKeyStore): ApiKeyStore {
    return {
      list: () => this.call("api_keys_list", () => k.list()),
      get: (sha256) => this.call("api_keys_get", () => k.get(sha256)),
      create: (key) => this.call("api_keys_create", () => k.create(key)),
      update: (sha256, patch) => this.call("api_keys_update", () => k.update(sha256, patch)),
      rotate: (sha256, fresh, patch) => this.call("api_keys_rotate", () => k.rotate(sha256, fresh, patch)),
      version: () => this.call("api_keys_version", () => k.version()),
      touch: (used) => this.call("api_keys_touch", () => k.touch(used)),
      lastUsed: () => this.call("api_keys_last_used", () => k.lastUsed()),
      ...(k.serverUptimeMs ? { serverUptimeMs: () => this.ask("api_keys_server_uptime", () => k.serverUptimeMs!()) } : {}),
    };
  }

  private guardResponseCache(c: ResponseCacheStore): ResponseCacheStore {
    return {
      get: (key: string, now: number) => this.call("cache_get", () => c.get(key, now)),
      put: (key: string, value: string, ttlMs: number, now: number) => this.call("cache_put", () => c.put(key, value, ttlMs, now)),
      setMaxBytes: (bytes: number) => c.setMaxBytes(bytes),
    };
  }

  private guardResponses(r: ResponseStore): ResponseStore {
    return {
      put: (rec: ResponseRecord) => this.call("responses_put", () => r.put(rec)),
      get: (owner: ResponseOwner, id: string, now: number) => this.call("responses_get", () => r.get(owner, id, now)),
      delete: (owner: ResponseOwner, id: string, now: number) => this.call("responses_delete", () => r.delete(owner, id, now)),
      items: (owner: ResponseOwner, ids: string[], now: number): Promise<Map<string, StoredItem>> => this.call("responses_items", () => r.items(owner, ids, now)),
    };
  }
}

/** close() could save some answered requests' ledger records nowhere: the shutdown fails (exit code 1) with this. */
export class UnsavedRecordsError extends Error {
  override name = "UnsavedRecordsError";
  constructor(readonly records: number, readonly writtenTo: string) {
    super(`${records} ledger record(s) of answered requests could not be saved: the store is unavailable and store.spool_dir ` +
      `cannot be written; they were written to ${writtenTo} for a replay`);
    this.stack = `${this.name}: ${this.message}`; // said to an operator at exit: no trace to read
  }
}

/** Errors of calls refused without being sent (the store was already down): nothing of theirs can land late. */
const NOT_SENT = new WeakSet<object>();
function notSent<E extends object>(err: E): E {
  NOT_SENT.add(err);
  return err;
}

function reasonOf(err: unknown): UnavailableReason {
  if (err instanceof StoreTimeoutError) return "timeout";
  if (err instanceof StoreStateLostError) return "state_lost";
  return "error";
}

/** A failure a record itself may have caused: not a timeout, not a store that lost its state. */
const recordMayBeTheCause = (err: unknown) => !(err instanceof StoreTimeoutError) && !(err instanceof StoreStateLostError);

/** Why a spooled record cannot be stored (its cost, read back from the spool, included), or undefined. */
function unstorableSpooled(r: SpooledRecord): string | undefined {
  let e: LedgerRecord;
  try {
    e = fromSpool(r.entry);
  } catch {
    return `cost_pico ${String(r.entry?.costPico)} is not an integer`;
  }
  return unstorable(e);
}

export function fromSpool(e: SpooledRecord["entry"]): LedgerRecord {
  return { ...e, costPico: BigInt(e.costPico) };
}
