// Store kind `redis`: several gateway replicas share rate windows, spend, reservations, idempotency records and
// the ledger (a Redis stream, with hourly and daily rollup hashes kept by the same script — or, with
// store.ledger: postgres, spend and settlements only: ledger-split.ts). Every check-and-update is one Lua script
// (redis-scripts.ts), atomic on the server.
// Durability of the ledger and of spend is Redis's own: run it with appendonly yes (fsync everysec or always).
// verify() refuses a server without AOF, and an "epoch" key tells whether the server still holds the state this
// gateway saw in it (a restart without persistence, a FLUSHALL or a failover to an empty replica lose it).
import type { Redis } from "ioredis";
import { ioredis } from "./ioredis.ts";
import { randomUUID } from "node:crypto";
import { readEpochs, writeEpochs } from "./epoch-file.ts";
import { settleWithin } from "../deadline.ts";
import { RedisCommandTimeout, boundCommands } from "./redis-command-bound.ts";
import { StoreStateLostError } from "./unavailable.ts";
import { SCHEMA_VERSION, checkSchemaVersion } from "./schema-version.ts";
import type { Logger } from "../log.ts";
import { allPeriods, chargedPeriods } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import { windowState } from "./gcra.ts";
import * as lua from "./redis-scripts.ts";
import { RedisResponseStore } from "./responses-redis.ts";
import { RedisMemoStore } from "./memo-redis.ts";
import { RedisApiKeyStore } from "./api-keys-redis.ts";
import { RedisResponseCacheStore } from "./response-cache-redis.ts";
import { COUNTERS, UsageAccumulator, countsOf, dayOf, groupMatches, hourOf, planUsage, zeroCounts, type RollupCounts, type RollupGroup } from "./rollup.ts";
import { encodeCursor, planSearch, recordMatches } from "./ledger-search.ts";
import type { LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import type {
  ClaimRenewal, IdempotencyBegin, LeaseRenewal, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse, VerifyOptions,
} from "./types.ts";

type Cmd = (...args: (string | number)[]) => Promise<any>;
interface Scripts {
  mgRate: Cmd; mgRateAdjust: Cmd; mgReserve: Cmd; mgRecord: Cmd; mgRecordSpend: Cmd; mgBackfill: Cmd; mgRollupsCurrent: Cmd; mgEpochClaim: Cmd;
  mgIdemBegin: Cmd; mgIdemComplete: Cmd; mgIdemRelease: Cmd; mgIdemRenew: Cmd; mgProbe: Cmd; mgRateState: Cmd; mgReserved: Cmd; mgRenew: Cmd;
}

/**
 * Start-up refused because INFO `section` failed. A reply that did not come in time says so (a slow, paused or
 * overloaded server, or a store.timeout_ms too short for it): it is not INFO being forbidden (an ACL, a renamed
 * command), which the operator fixes by allowing it.
 */
function infoFailed(where: string, section: string, tells: string, err: unknown, accepted: string): Error {
  const [why, fix] = err instanceof RedisCommandTimeout
    ? [`INFO ${section} timed out: no reply within ${err.ms} ms`, "Check the server is not overloaded or paused, or raise store.timeout_ms"]
    : [`INFO ${section}: ${(err as Error).message}`, "Allow INFO"];
  return new Error(`cannot tell whether Redis at ${where} ${tells} (${why}); budgets' spend lives there. ${fix}, ` +
    `or set store.require_persistence: false to accept that ${accepted}`);
}

export interface RedisOptions {
  /** Bound on every command (redis-command-bound.ts): a server that stops answering fails the command, not the caller. */
  commandTimeoutMs?: number;
  /**
   * The ledger lives elsewhere (store.ledger: postgres): record() keeps spend and settlements only, and when Redis
   * loses its state the period's spend is rebuilt from this source's rollups instead of being refused.
   */
  spendSource?: SpendSource;
  log?: Logger;
}

/** Where spend can be rebuilt from when Redis lost it: the ledger's rollups. */
export interface SpendSource {
  /** Write what is still on its way to the ledger, as far as possible within a short bound. */
  flush(): Promise<void>;
  /** Every project's spend in the periods containing `now` (day, week, month, total). */
  periodSpend(now: number): Promise<{ project: string; periodKey: string; pico: bigint }[]>;
}

/** Entries a search reads from the stream per call at most (the page then ends early, with a cursor). */
/** The whole handshake with the server (TCP connect, ready check, PING) at start or in a CLI command. */
const CONNECT_TIMEOUT_MS = 5_000;
const SEARCH_SCAN = 20_000;
/** Holds renewed per script call (each a key and two arguments). */
const RENEW_BATCH = 500;
/** How long a rebuild of spend may hold the lock before another replica may take over. */
const REBUILD_LOCK_MS = 60_000;

export class RedisStore implements Store {
  readonly kind = "redis" as const;
  private readonly r: Redis & Scripts;
  readonly responses: RedisResponseStore;
  readonly memos: RedisMemoStore;
  readonly apiKeys: RedisApiKeyStore;
  readonly responseCache: RedisResponseCacheStore;

  private constructor(redis: Redis, private readonly prefix: string, private readonly spendSource?: SpendSource, private readonly log?: Logger) {
    redis.defineCommand("mgRate", { lua: lua.RATE_LIMIT });
    redis.defineCommand("mgRateAdjust", { lua: lua.RATE_ADJUST, numberOfKeys: 3 });
    redis.defineCommand("mgReserve", { lua: lua.RESERVE });
    redis.defineCommand("mgRecord", { lua: lua.RECORD });
    redis.defineCommand("mgRecordSpend", { lua: lua.RECORD_SPEND });
    redis.defineCommand("mgBackfill", { lua: lua.BACKFILL, numberOfKeys: 2 });
    redis.defineCommand("mgRollupsCurrent", { lua: lua.ROLLUPS_CURRENT, numberOfKeys: 2 });
    redis.defineCommand("mgEpochClaim", { lua: lua.EPOCH_CLAIM, numberOfKeys: 4 });
    redis.defineCommand("mgIdemBegin", { lua: lua.IDEM_BEGIN, numberOfKeys: 1 });
    redis.defineCommand("mgIdemComplete", { lua: lua.IDEM_COMPLETE, numberOfKeys: 1 });
    redis.defineCommand("mgIdemRelease", { lua: lua.IDEM_RELEASE, numberOfKeys: 1 });
    redis.defineCommand("mgIdemRenew", { lua: lua.IDEM_RENEW });
    redis.defineCommand("mgProbe", { lua: lua.PROBE, numberOfKeys: 2 });
    redis.defineCommand("mgRateState", { lua: lua.RATE_STATE });
    redis.defineCommand("mgReserved", { lua: lua.RESERVED });
    redis.defineCommand("mgRenew", { lua: lua.RENEW });
    this.r = redis as Redis & Scripts;
    // A lost connection may come back to a server that restarted without its data: whoever watches (the guard) stops
    // trusting the store at once, before any command could reach the new server, and probes it first.
    redis.on("close", () => {
      for (const fn of this.lost) fn();
    });
    this.responses = new RedisResponseStore(redis, prefix);
    this.memos = new RedisMemoStore(redis, prefix);
    this.apiKeys = new RedisApiKeyStore(redis, prefix);
    this.responseCache = new RedisResponseCacheStore(redis, prefix);
  }

  /** Connect and check the server answers; a wrong URL fails the boot with a clear message. */
  static async connect(url: string, prefix = "mg:", o: RedisOptions = {}): Promise<RedisStore> {
    // No offline queue and no retries: while the connection is down a command fails at once (never waits, never runs
    // late against a server that came back empty); the guard decides what the request gets.
    const redis = new (ioredis().Redis)(url, {
      lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: CONNECT_TIMEOUT_MS,
      // A server that does not close its side (paused) is not waited for after our FIN (ioredis: 2 s).
      disconnectTimeout: 500,
      // Reconnect within a second of the server coming back (ioredis waits up to 2 s by default).
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    redis.on("error", () => {}); // reconnects on its own; failing commands surface per request
    if (o.commandTimeoutMs) boundCommands(redis, o.commandTimeoutMs); // not ioredis's commandTimeout: see there
    try {
      // One bound for the whole handshake: connectTimeout stops at the TCP connect, and a server that accepts but
      // never answers (paused) would hold the ready check for a command timeout per reconnect.
      await settleWithin(redis.connect().then(() => redis.ping()), CONNECT_TIMEOUT_MS, () => {
        throw new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`);
      });
    } catch (err) {
      redis.disconnect();
      throw new Error(`store: cannot reach Redis at ${url.replace(/\/\/[^@]*@/, "//***@")}: ${(err as Error).message}`);
    }
    const store = new RedisStore(redis, prefix, o.spendSource, o.log);
    store.where = `${url.replace(/\/\/[^@]*@/, "//***@")} (prefix ${prefix})`;
    try {
      // Before anything reads or writes the keys: a newer release's layout is refused, here and in every command.
      checkSchemaVersion("redis", `Redis at ${store.where}`, await redis.get(store.k("schema")));
    } catch (err) {
      redis.disconnect();
      throw err;
    }
    return store;
  }

  /** Which server and prefix, for messages (no password). */
  private where = "";
  /** The epoch this gateway last saw in Redis; undefined until verify(). */
  private epoch: string | undefined;
  /** Where the epoch is kept across restarts (the spool directory's store-epochs.json); set by verify(). */
  private epochFile: string | undefined;
  private requirePersistence = true;
  private readonly lost: (() => void)[] = [];

  /** Called whenever the connection is lost: when it comes back, the server may have restarted without its data. */
  onConnectionLost(fn: () => void): void {
    this.lost.push(fn);
  }

  /**
   * Before serving: the server must persist (AOF), and still hold the state this gateway (on this machine) last saw
   * in it — otherwise every project's spend for the period would silently restart from zero.
   */
  async verify(o: VerifyOptions): Promise<void> {
    this.requirePersistence = o.requirePersistence;
    // Serving: stamp the layout this release writes (never lowering a newer one another replica stamped meanwhile).
    await this.r.eval(STAMP_SCHEMA, 1, this.k("schema"), SCHEMA_VERSION.redis);
    if (o.requirePersistence) {
      let info: string;
      try {
        info = await this.r.info("persistence");
      } catch (err) {
        throw infoFailed(this.where, "persistence", "persists its data", err, "a Redis restart may reset spend");
      }
      if (/^aof_enabled:0\s*$/m.test(info)) {
        throw new Error(`Redis at ${this.where} runs without appendonly (AOF): a Redis restart would erase the usage ledger and every ` +
          "project's spend for the period, and budgets would start again from zero. Run it with appendonly yes " +
          "(redis-server --appendonly yes, or CONFIG SET appendonly yes), or set store.require_persistence: false to accept that");
      }
      await this.refuseEviction();
    }
    this.epochFile = o.epochFile;
    const last = readEpochs(o.epochFile)[this.where];
    if (this.spendSource) {
      // Spend can be rebuilt from the ledger: a Redis that lost it is repaired, not refused.
      this.setEpoch(await this.claimEpoch(last, 20_000), true);
      return;
    }
    await this.r.set(this.k("epoch"), newEpoch(), "NX");
    this.epoch = (await this.r.get(this.k("epoch"))) ?? undefined;
    if (o.requirePersistence && last && last !== this.epoch) {
      throw new Error(`Redis at ${this.where} no longer holds the state this gateway last saw in it (epoch ${last}; now ${this.epoch}): ` +
        "it was restarted without its data, flushed, or replaced. Every project's spend for the period would restart from zero. " +
        `Restore Redis's data (its appendonly file), or accept the reset by removing ${o.epochFile} (or its entry for this server)`);
    }
    this.setEpoch(this.epoch, true);
  }

  /**
   * The epoch to trust from now on, kept in the epoch file whenever it changes (not only at start): a process that
   * restarts after a rebuild must know the rebuilt epoch, or a restored older backup would look like its own state.
   */
  private setEpoch(epoch: string | undefined, atStart = false): void {
    this.epoch = epoch;
    if (!this.epochFile || epoch === undefined) return;
    const seen = readEpochs(this.epochFile);
    if (seen[this.where] === epoch) return;
    try {
      writeEpochs(this.epochFile, { ...seen, [this.where]: epoch });
    } catch (err) {
      // At start this fails the boot (as before); later the epoch is still trusted in memory, and said so.
      if (atStart) throw err;
      this.log?.error("store: cannot write the Redis epoch file", { file: this.epochFile, error: String(err) });
    }
  }

  /**
   * A Redis with a memory limit and an eviction policy drops keys when it fills up (another client's data can fill
   * it): spend keys have a TTL, so every `volatile-*` policy may pick them, and budgets would restart from zero
   * while the epoch (no TTL) stayed, unnoticed. Managed Redis services default to volatile-lru.
   */
  private async refuseEviction(): Promise<void> {
    const info = await this.r.info("memory").catch((err: Error) => {
      throw infoFailed(this.where, "memory", "evicts keys", err, "spend may be lost");
    });
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    const limit = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0);
    if (policy === undefined || policy === "noeviction" || limit === 0) return;
    throw new Error(`Redis at ${this.where} evicts keys when it reaches its memory limit (maxmemory ${limit} bytes, ` +
      `maxmemory-policy ${policy}): it could drop a project's spend, and its budget would start again from zero. ` +
      "Set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction; on a managed Redis, in its parameter " +
      "group), or set store.require_persistence: false to accept that");
  }

  /** A write (fails on a read-only replica, a server refusing writes) and, after verify(), the epoch check. */
  async probe(): Promise<void> {
    const epoch: string | null = await this.r.mgProbe(this.k("probe"), this.k("epoch"), Date.now());
    if (this.epoch === undefined || epoch === this.epoch) return;
    if (this.spendSource) {
      this.setEpoch(await this.claimEpoch(this.epoch, 0));
      return;
    }
    if (this.requirePersistence) {
      throw new StoreStateLostError(`Redis at ${this.where} lost the gateway's state (epoch ${this.epoch} is ${epoch ? `now ${epoch}` : "gone"}): ` +
        "spend, reservations and the ledger it held are gone. Budgets are refused until it is restored or the gateway is restarted to accept the reset");
    }
    // require_persistence: false accepts resets; take the new epoch.
    await this.r.set(this.k("epoch"), newEpoch(), "NX");
    this.setEpoch((await this.r.get(this.k("epoch"))) ?? undefined);
  }

  /**
   * With the ledger elsewhere: the epoch to trust, after making sure the spend counters belong to it. A Redis that
   * lost its state (no epoch, or one `known` is not) gets every project's spend for the current periods rebuilt from
   * the ledger's rollups, by one replica (a lock); the others wait for it (`waitMs`, or refuse budgets meanwhile).
   * Counters marked current for another epoch than `known` are trusted only if a rebuild replaced `known` with them:
   * otherwise they may be a restored backup (EPOCH_CLAIM), and are rebuilt too.
   */
  private async claimEpoch(known: string | undefined, waitMs: number): Promise<string> {
    const owner = randomUUID();
    const end = Date.now() + waitMs;
    for (;;) {
      const [epoch, state]: [string, string] = await this.r.mgEpochClaim(
        this.k("epoch"), this.k("spend-epoch"), this.k("spend-rebuild"), this.k("spend-replaced"), newEpoch(), owner, REBUILD_LOCK_MS, known ?? "",
      );
      if (state === "ready") return epoch;
      if (state === "unmarked" && (known === undefined || known === epoch)) {
        // The state this gateway saw (or a Redis that held spend before the ledger moved): its counters are current.
        await this.r.set(this.k("spend-epoch"), epoch);
        return epoch;
      }
      if (state === "rebuild" || (state === "unmarked" && (await this.r.set(this.k("spend-rebuild"), owner, "PX", REBUILD_LOCK_MS, "NX")))) {
        await this.rebuildSpend(epoch, owner, known);
        return epoch;
      }
      if (Date.now() >= end) {
        // Not state_lost: nothing for an operator to do, the store is unavailable for the moment of the rebuild.
        throw new Error(`Redis at ${this.where} lost the gateway's state; another replica is rebuilding every project's spend ` +
          "from the ledger's rollups");
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Spend counters of the current periods := the ledger's sums (after this replica's own pending records are written). */
  private async rebuildSpend(epoch: string, owner: string, replaced: string | undefined): Promise<void> {
    const source = this.spendSource!;
    try {
      await source.flush();
      const rows = await source.periodSpend(Date.now());
      const p = this.r.pipeline();
      for (const row of rows) {
        const key = this.k("spend", row.project, row.periodKey);
        if (row.periodKey === "total") p.set(key, row.pico.toString());
        else p.set(key, row.pico.toString(), "EX", 34560000);
      }
      p.set(this.k("spend-epoch"), epoch);
      // Replicas that saw `replaced` may trust these counters without rebuilding them again.
      if (replaced !== undefined && replaced !== epoch) p.sadd(this.k("spend-replaced"), replaced);
      await p.exec();
      this.rebuilt++;
      const projects = new Set(rows.filter((r) => r.pico !== 0n).map((r) => r.project)).size;
      if (replaced !== undefined) {
        this.log?.warn("store: Redis no longer held the spend this gateway saw (lost, or restored from an older backup); spend rebuilt from the ledger's rollups", { redis: this.where, projects });
      } else if (projects) {
        // Nothing known here: a new server or prefix over a ledger with spend, or a loss before this replica's first start.
        this.log?.warn("store: Redis held no spend counters while the ledger has spend (a new Redis or prefix over an existing ledger, or a Redis that lost its data before this gateway first used it); spend rebuilt from the ledger's rollups", { redis: this.where, projects });
      } else {
        // A brand-new deployment: nothing was lost, nothing to rebuild.
        this.log?.info("store: Redis holds no gateway state yet (a new server or prefix); spend counters start empty, as the ledger has none", { redis: this.where });
      }
    } finally {
      if ((await this.r.get(this.k("spend-rebuild")).catch(() => null)) === owner) await this.r.del(this.k("spend-rebuild")).catch(() => {});
    }
  }

  /** How many times this process rebuilt spend from the ledger (for tests and the log). */
  rebuilt = 0;

  private k(...parts: string[]): string {
    return this.prefix + parts.join(":");
  }

  async rateLimit(charges: RateCharge[], now: number): Promise<RateResult> {
    if (!charges.length) return { ok: true, windows: [], retryAfterMs: 0, refused: [] };
    const keys = this.rateKeys(charges.map((c) => c.key));
    const args: (string | number)[] = [keys.length, ...keys];
    for (const c of charges) args.push(c.limit, c.cost);
    const out: string[] = (await this.r.mgRate(...args)).map(String);
    const ok = out[0] === "1";
    const serverNow = Number(out[2]);
    void now;
    return {
      ok,
      retryAfterMs: Number(out[1]),
      windows: charges.map((c, i) => windowState(c, Number(out[3 + i]), serverNow)),
      refused: charges.flatMap((_c, i) => (out[3 + charges.length + i] === "1" ? [i] : [])),
    };
  }

  async rateAdjust(key: string, limit: number, delta: number, _now?: number): Promise<void> {
    await this.r.mgRateAdjust(...this.rateKeys([key]), limit, delta);
  }

  /**
   * The windows' keys as the rate scripts take them (redis-scripts.ts RESCALED): every tat, then beside each the limit
   * it was written under (a changed limit rescales it), then when it was written (a clock stepped back since).
   */
  private rateKeys(windows: string[]): string[] {
    return [...windows.map((w) => this.k("rl", w)), ...windows.map((w) => this.k("rl-limit", w)), ...windows.map((w) => this.k("rl-at", w))];
  }

  async rateState(windows: { key: string; limit: number }[], _now?: number): Promise<RateState[]> {
    if (!windows.length) return [];
    const keys = this.rateKeys(windows.map((w) => w.key));
    const out: string[] = (await this.r.mgRateState(keys.length, ...keys, ...windows.map((w) => w.limit))).map(String);
    const serverNow = Number(out[0]);
    return windows.map((w, i) => windowState({ ...w, cost: 0 }, Math.max(Number(out[1 + i]), serverNow), serverNow));
  }

  /**
   * The scope's reservations hashes a hold may count from (redis-scripts.ts HELD): the period's own, where a hold made
   * now goes, then those of the day, week and month containing `at` and the total. A hold is kept in the hash of the
   * period its budget had at admission (the previous release's layout, so replicas of both share it), and a reload
   * may have changed the period since.
   */
  private holdHashes(scope: string, periodKey: string, at: number): string[] {
    const keys = [this.k("resv", scope, periodKey)];
    for (const w of allPeriods(at)) if (w.key !== periodKey) keys.push(this.k("resv", scope, w.key));
    return keys;
  }

  async reserved(project: string, periodKey: string, now: number): Promise<bigint> {
    const keys = this.holdHashes(project, periodKey, now);
    return BigInt(await this.r.mgReserved(keys.length, ...keys));
  }

  async reserve(r: Reservation, now: number): Promise<ReserveResult> {
    // The periods containing the admission, by this replica's clock as the period key is (leases by the server's).
    const keys = this.holdHashes(r.project, r.periodKey, r.at ?? now);
    const [ok, spent, reserved] = await this.r.mgReserve(
      keys.length + 1, this.k("spend", r.project, r.periodKey), ...keys, r.id, r.amountPico.toString(), r.limitPico.toString(), r.leaseMs,
    );
    return { ok: Number(ok) === 1, spentPico: BigInt(spent), reservedPico: BigInt(reserved) };
  }

  async release(s: Settlement): Promise<void> {
    await this.r.hdel(this.k("resv", s.project, s.periodKey), s.id);
  }

  /** One script per RENEW_BATCH holds (server time, like RESERVE). */
  async renewHolds(holds: LeaseRenewal[], _now?: number): Promise<void> {
    for (let i = 0; i < holds.length; i += RENEW_BATCH) {
      const batch = holds.slice(i, i + RENEW_BATCH);
      const args: (string | number)[] = [batch.length, ...batch.map((h) => this.k("resv", h.project, h.periodKey))];
      for (const h of batch) args.push(h.id, h.leaseMs);
      await this.r.mgRenew(...args);
    }
  }

  async spent(project: string, periodKey: string, _periodStart?: number): Promise<bigint> {
    return BigInt((await this.r.get(this.k("spend", project, periodKey))) ?? "0");
  }

  async record(entry: LedgerRecord, settle?: Settlement): Promise<void> {
    // The project's spend counters, then its key's (key-budget.ts).
    const periods = chargedPeriods(entry);
    const scope = keyScope(entry.project, entry.keyId);
    const spend = [...periods.map((p) => this.k("spend", entry.project, p.key)), ...periods.map((p) => this.k("spend", scope, p.key))];
    if (this.spendSource) {
      // The record itself goes to the ledger store (the caller's job): spend, settlement and the once-marker here.
      const keys = [this.k("gen", entry.generationId), ...spend];
      if (settle) keys.push(this.k("resv", settle.project, settle.periodKey));
      await this.r.mgRecordSpend(keys.length, ...keys, entry.costPico.toString(), settle?.id ?? "");
      return;
    }
    const keys = [this.k("ledger"), this.k("gen", entry.generationId), ...spend, this.k("roll-ptr")];
    if (settle) keys.push(this.k("resv", settle.project, settle.periodKey));
    const json = JSON.stringify(entry, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    await this.r.mgRecord(keys.length, ...keys, json, entry.costPico.toString(), settle?.id ?? "", this.prefix, ...rollupArgs(entry));
  }

  /**
   * Count in the rollups the stream entries a gateway from before rollups wrote (once; a no-op when current). Runs
   * before a usage answer, and at start.
   */
  async backfillRollups(): Promise<number> {
    let total = 0;
    if (Number(await this.r.mgRollupsCurrent(this.k("ledger"), this.k("roll-ptr"))) === 1) return 0;
    for (;;) {
      const [read, more] = (await this.r.mgBackfill(this.k("ledger"), this.k("roll-ptr"), this.prefix, 200)).map(Number);
      total += read!;
      if (!more) return total;
    }
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const p = planUsage(q);
    await this.backfillRollups();
    const acc = new UsageAccumulator(p);
    for (const scan of p.scans) {
      const index = this.k("roll", scan.table === "hour" ? "hours" : "days");
      const starts = (await this.r.zrangebyscore(index, scan.from, `(${scan.to}`)).map(Number);
      for (let i = 0; i < starts.length; i += 500) {
        const chunk = starts.slice(i, i + 500);
        const pipe = this.r.pipeline();
        for (const t of chunk) pipe.hgetall(this.k("roll", scan.table === "hour" ? "h" : "d", String(t)));
        const res = (await pipe.exec()) ?? [];
        res.forEach(([err, hash], j) => {
          if (err) throw err;
          for (const [group, counts] of parseRollupHash(hash as Record<string, string>)) if (groupMatches(p, group)) acc.add(chunk[j]!, group, counts);
        });
      }
    }
    return acc.result();
  }

  /**
   * Newest landed first, read from the stream's end (or the cursor) back; one call reads at most SEARCH_SCAN entries,
   * so a narrow filter may return a short page with a cursor to read on from.
   */
  async search(q: RequestSearch): Promise<RequestPage> {
    const p = planSearch(q);
    // The cursor of a Redis page names the stream entry where the page ended (its id in generationId).
    let end = p.after && /^\d+-\d+$/.test(p.after.generationId) ? `(${p.after.generationId}` : "+";
    const rest = { ...p, after: undefined };
    const found: { id: string; r: LedgerRecord }[] = [];
    let scanned = 0;
    let lastId: string | undefined;
    while (found.length <= p.limit && scanned < SEARCH_SCAN) {
      const batch = await this.r.xrevrange(this.k("ledger"), end, "-", "COUNT", 500);
      for (const [id, fields] of batch) {
        scanned++;
        lastId = id;
        const r = recordOf(fields);
        if (r && recordMatches(rest, r)) found.push({ id, r });
        if (found.length > p.limit) break;
      }
      if (batch.length < 500) {
        lastId = undefined; // read to the beginning: no further page
        break;
      }
      end = `(${batch[batch.length - 1]![0]}`;
    }
    const records = found.slice(0, p.limit);
    const cursorAt = found.length > p.limit ? found[p.limit - 1]!.id : records.length < p.limit ? lastId : undefined;
    return cursorAt ? { records: records.map((f) => f.r), next: encodeCursor({ ts: Number(cursorAt.split("-")[0]), generationId: cursorAt }) } : { records: records.map((f) => f.r) };
  }

  async get(generationId: string): Promise<LedgerRecord | undefined> {
    const id = await this.r.get(this.k("gen", generationId));
    if (!id) return undefined;
    if (/^\d+-\d+$/.test(id)) {
      const [hit] = await this.r.xrange(this.k("ledger"), id, id);
      return hit ? recordOf(hit[1]) : undefined;
    }
    // Written before the marker named its entry: search for it (bounded).
    return (await this.search({ generationId, limit: 1 })).records[0];
  }

  async ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    let start = q.since ? String(q.since) : "-";
    for (;;) {
      const batch = await this.r.xrange(this.k("ledger"), start, "+", "COUNT", 1000);
      for (const [, fields] of batch) {
        const e = recordOf(fields);
        if (e && (!q.project || e.project === q.project) && (!q.since || e.ts >= q.since)) out.push(e);
      }
      if (batch.length < 1000) return out;
      start = "(" + batch[batch.length - 1]![0];
    }
  }

  /** Entries in the ledger stream (what a gateway wrote before store.ledger: postgres). */
  ledgerLength(): Promise<number> {
    return this.r.xlen(this.k("ledger"));
  }

  /** Up to `count` ledger stream entries after the entry `after` ("0-0": from the first), oldest first, with their ids. */
  async ledgerAfter(after: string, count: number): Promise<{ id: string; record: LedgerRecord | undefined }[]> {
    const batch = await this.r.xrange(this.k("ledger"), `(${after}`, "+", "COUNT", count);
    return batch.map(([id, fields]) => ({ id, record: recordOf(fields) }));
  }

  /** The ledger stream's key, for messages. */
  get ledgerKey(): string {
    return this.k("ledger");
  }

  async idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, _now?: number, renewEveryMs?: number): Promise<IdempotencyBegin> {
    const args: (string | number)[] = [this.k("idem", scope), hash, owner, leaseMs];
    if (renewEveryMs !== undefined) args.push(renewEveryMs);
    const [state, a, b] = await this.r.mgIdemBegin(...args);
    if (state === "done") return { state, response: JSON.parse(a) as StoredResponse };
    // A claim its owner said it renews: how long since (server time: its lease less what PTTL says is left).
    if (state === "pending" && a !== undefined) return { state, renewal: { quietMs: Number(a), everyMs: Number(b) } };
    return { state } as IdempotencyBegin;
  }

  async idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number): Promise<void> {
    await this.r.mgIdemComplete(this.k("idem", scope), hash, owner, JSON.stringify(response), ttlMs);
  }

  async idempotencyRelease(scope: string, owner: string): Promise<void> {
    await this.r.mgIdemRelease(this.k("idem", scope), owner);
  }

  /** One script per RENEW_BATCH claims (server time: PEXPIRE, as IDEM_BEGIN's PX). */
  async renewClaims(claims: ClaimRenewal[], _now?: number): Promise<void> {
    for (let i = 0; i < claims.length; i += RENEW_BATCH) {
      const batch = claims.slice(i, i + RENEW_BATCH);
      const args: (string | number)[] = [batch.length, ...batch.map((c) => this.k("idem", c.scope))];
      for (const c of batch) args.push(c.owner, c.leaseMs);
      await this.r.mgIdemRenew(...args);
    }
  }

  /** QUIT when connected (flushes pending replies); a lost connection is just dropped, never waited for. */
  async close(): Promise<void> {
    if (this.r.status === "ready") {
      await settleWithin(this.r.quit().catch(() => {}), 2_000, () => {});
    }
    this.r.disconnect();
  }
}

/**
 * A record's rollup increments for RECORD: group field prefix, hour, day, then the non-zero counters as name, value
 * (the same as the scripts' ROLL computes from an entry, which BACKFILL uses).
 */
function rollupArgs(e: LedgerRecord): string[] {
  const c = countsOf(e);
  const out = [
    [e.project, e.keyId, e.model, e.provider, e.endpoint, e.sandbox ? "1" : "0"].join("\x1f") + "\x1e", String(hourOf(e.ts)), String(dayOf(e.ts)),
  ];
  for (const k of COUNTERS) {
    const v = c[k];
    if (k === "videoSeconds" ? !Number.isFinite(v) || v === 0 : v === 0 || v === 0n) continue;
    out.push(k, k === "videoSeconds" ? (v as number).toPrecision(17) : typeof v === "bigint" ? v.toString() : String(Math.round(v as number)));
  }
  return out;
}

/** SET the schema version unless the key holds a higher one; returns what it held. */
const STAMP_SCHEMA = `local v = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return v`;

const newEpoch = () => `${randomUUID()} ${new Date().toISOString()}`;

/** A stream entry's record (field "e"), money back to bigint. */
function recordOf(fields: string[]): LedgerRecord | undefined {
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] !== "e") continue;
    const e = JSON.parse(fields[i + 1]!) as LedgerRecord;
    e.costPico = BigInt(e.costPico as unknown as string);
    return e;
  }
  return undefined;
}

/** A rollup hash ("group␞counter" -> value) back to its groups and their counters. */
function parseRollupHash(hash: Record<string, string>): Map<RollupGroup, RollupCounts> {
  const byGroup = new Map<string, { g: RollupGroup; c: RollupCounts }>();
  for (const [field, value] of Object.entries(hash)) {
    const cut = field.lastIndexOf("\x1e");
    const gk = field.slice(0, cut);
    const counter = field.slice(cut + 1) as keyof RollupCounts;
    let row = byGroup.get(gk);
    if (!row) {
      const [project, key, model, provider, endpoint, sandbox] = gk.split("\x1f");
      byGroup.set(gk, (row = { g: { project: project!, key: key!, model: model!, provider: provider!, endpoint: endpoint!, sandbox: sandbox === "1" }, c: zeroCounts() }));
    }
    if (counter === "costPico") row.c.costPico = BigInt(value);
    else if (counter in row.c) (row.c as unknown as Record<string, number>)[counter] = Number(value);
  }
  return new Map([...byGroup.values()].map(({ g, c }) => [g, c]));
}
