// Store kind `redis`: several gateway replicas share rate windows, spend, reservations, idempotency records and
// the ledger (a Redis stream). Every check-and-update is one Lua script (redis-scripts.ts), atomic on the server.
// Durability of the ledger and of spend is Redis's own: run it with appendonly yes (fsync everysec or always).
// verify() refuses a server without AOF, and an "epoch" key tells whether the server still holds the state this
// gateway saw in it (a restart without persistence, a FLUSHALL or a failover to an empty replica lose it).
import { Redis } from "ioredis";
import { readFileSync, renameSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { randomUUID } from "node:crypto";
import { StoreStateLostError } from "./unavailable.ts";
import { allPeriods } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import { windowState } from "./gcra.ts";
import * as lua from "./redis-scripts.ts";
import { RedisResponseStore } from "./responses-redis.ts";
import { RedisMemoStore } from "./memo-redis.ts";
import { RedisApiKeyStore } from "./api-keys-redis.ts";
import type {
  IdempotencyBegin, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse, VerifyOptions,
} from "./types.ts";

type Cmd = (...args: (string | number)[]) => Promise<any>;
interface Scripts {
  mgRate: Cmd; mgRateAdjust: Cmd; mgReserve: Cmd; mgRecord: Cmd; mgIdemBegin: Cmd; mgIdemComplete: Cmd; mgIdemRelease: Cmd; mgProbe: Cmd; mgRateState: Cmd; mgReserved: Cmd;
}

export interface RedisOptions {
  /** Bound on every command (ioredis commandTimeout): a server that stops answering fails the command, not the caller. */
  commandTimeoutMs?: number;
}

export class RedisStore implements Store {
  readonly kind = "redis" as const;
  private readonly r: Redis & Scripts;
  readonly responses: RedisResponseStore;
  readonly memos: RedisMemoStore;
  readonly apiKeys: RedisApiKeyStore;

  private constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand("mgRate", { lua: lua.RATE_LIMIT });
    redis.defineCommand("mgRateAdjust", { lua: lua.RATE_ADJUST, numberOfKeys: 1 });
    redis.defineCommand("mgReserve", { lua: lua.RESERVE, numberOfKeys: 2 });
    redis.defineCommand("mgRecord", { lua: lua.RECORD });
    redis.defineCommand("mgIdemBegin", { lua: lua.IDEM_BEGIN, numberOfKeys: 1 });
    redis.defineCommand("mgIdemComplete", { lua: lua.IDEM_COMPLETE, numberOfKeys: 1 });
    redis.defineCommand("mgIdemRelease", { lua: lua.IDEM_RELEASE, numberOfKeys: 1 });
    redis.defineCommand("mgProbe", { lua: lua.PROBE, numberOfKeys: 2 });
    redis.defineCommand("mgRateState", { lua: lua.RATE_STATE });
    redis.defineCommand("mgReserved", { lua: lua.RESERVED, numberOfKeys: 1 });
    this.r = redis as Redis & Scripts;
    // A lost connection may come back to a server that restarted without its data: whoever watches (the guard) stops
    // trusting the store at once, before any command could reach the new server, and probes it first.
    redis.on("close", () => {
      for (const fn of this.lost) fn();
    });
    this.responses = new RedisResponseStore(redis, prefix);
    this.memos = new RedisMemoStore(redis, prefix);
    this.apiKeys = new RedisApiKeyStore(redis, prefix);
  }

  /** Connect and check the server answers; a wrong URL fails the boot with a clear message. */
  static async connect(url: string, prefix = "mg:", o: RedisOptions = {}): Promise<RedisStore> {
    // No offline queue and no retries: while the connection is down a command fails at once (never waits, never runs
    // late against a server that came back empty); the guard decides what the request gets.
    const redis = new Redis(url, {
      lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 5_000,
      ...(o.commandTimeoutMs ? { commandTimeout: o.commandTimeoutMs } : {}),
      // Reconnect within a second of the server coming back (ioredis waits up to 2 s by default).
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    redis.on("error", () => {}); // reconnects on its own; failing commands surface per request
    try {
      await redis.connect();
      await redis.ping();
    } catch (err) {
      redis.disconnect();
      throw new Error(`store: cannot reach Redis at ${url.replace(/\/\/[^@]*@/, "//***@")}: ${(err as Error).message}`);
    }
    const store = new RedisStore(redis, prefix);
    store.where = `${url.replace(/\/\/[^@]*@/, "//***@")} (prefix ${prefix})`;
    return store;
  }

  /** Which server and prefix, for messages (no password). */
  private where = "";
  /** The epoch this gateway saw in Redis at start; undefined until verify(). */
  private epoch: string | undefined;
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
    if (o.requirePersistence) {
      let info: string;
      try {
        info = await this.r.info("persistence");
      } catch (err) {
        throw new Error(`cannot tell whether Redis at ${this.where} persists its data (INFO persistence: ${(err as Error).message}); ` +
          "budgets' spend lives there. Allow INFO, or set store.require_persistence: false to accept that a Redis restart may reset spend");
      }
      if (/^aof_enabled:0\s*$/m.test(info)) {
        throw new Error(`Redis at ${this.where} runs without appendonly (AOF): a Redis restart would erase the usage ledger and every ` +
          "project's spend for the period, and budgets would start again from zero. Run it with appendonly yes " +
          "(redis-server --appendonly yes, or CONFIG SET appendonly yes), or set store.require_persistence: false to accept that");
      }
    }
    await this.r.set(this.k("epoch"), `${randomUUID()} ${new Date().toISOString()}`, "NX");
    this.epoch = (await this.r.get(this.k("epoch"))) ?? undefined;
    const seen = readEpochs(o.epochFile);
    const last = seen[this.where];
    if (o.requirePersistence && last && last !== this.epoch) {
      throw new Error(`Redis at ${this.where} no longer holds the state this gateway last saw in it (epoch ${last}; now ${this.epoch}): ` +
        "it was restarted without its data, flushed, or replaced. Every project's spend for the period would restart from zero. " +
        `Restore Redis's data (its appendonly file), or accept the reset by removing ${o.epochFile} (or its entry for this server)`);
    }
    if (last !== this.epoch) writeEpochs(o.epochFile, { ...seen, [this.where]: this.epoch! });
  }

  /** A write (fails on a read-only replica, a server refusing writes) and, after verify(), the epoch check. */
  async probe(): Promise<void> {
    const epoch: string | null = await this.r.mgProbe(this.k("probe"), this.k("epoch"), Date.now());
    if (this.epoch === undefined || epoch === this.epoch) return;
    if (this.requirePersistence) {
      throw new StoreStateLostError(`Redis at ${this.where} lost the gateway's state (epoch ${this.epoch} is ${epoch ? `now ${epoch}` : "gone"}): ` +
        "spend, reservations and the ledger it held are gone. Budgets are refused until it is restored or the gateway is restarted to accept the reset");
    }
    // require_persistence: false accepts resets; take the new epoch.
    await this.r.set(this.k("epoch"), `${randomUUID()} ${new Date().toISOString()}`, "NX");
    this.epoch = (await this.r.get(this.k("epoch"))) ?? undefined;
  }

  private k(...parts: string[]): string {
    return this.prefix + parts.join(":");
  }

  async rateLimit(charges: RateCharge[], now: number): Promise<RateResult> {
    if (!charges.length) return { ok: true, windows: [], retryAfterMs: 0 };
    const args: (string | number)[] = [charges.length, ...charges.map((c) => this.k("rl", c.key))];
    for (const c of charges) args.push(c.limit, c.cost);
    const out: string[] = (await this.r.mgRate(...args)).map(String);
    const ok = out[0] === "1";
    const serverNow = Number(out[2]);
    void now;
    return {
      ok,
      retryAfterMs: Number(out[1]),
      windows: charges.map((c, i) => windowState(c, Number(out[3 + i]), serverNow)),
    };
  }

  async rateAdjust(key: string, limit: number, delta: number, _now?: number): Promise<void> {
    await this.r.mgRateAdjust(this.k("rl", key), limit, delta);
  }

  async rateState(windows: { key: string; limit: number }[], _now?: number): Promise<RateState[]> {
    if (!windows.length) return [];
    const out: string[] = (await this.r.mgRateState(windows.length, ...windows.map((w) => this.k("rl", w.key)))).map(String);
    const serverNow = Number(out[0]);
    return windows.map((w, i) => windowState({ ...w, cost: 0 }, Math.max(Number(out[1 + i]), serverNow), serverNow));
  }

  async reserved(project: string, periodKey: string, _now?: number): Promise<bigint> {
    return BigInt(await this.r.mgReserved(this.k("resv", project, periodKey)));
  }

  async reserve(r: Reservation, _now?: number): Promise<ReserveResult> {
    const [ok, spent, reserved] = await this.r.mgReserve(
      this.k("spend", r.project, r.periodKey), this.k("resv", r.project, r.periodKey), r.id, r.amountPico.toString(), r.limitPico.toString(), r.leaseMs,
    );
    return { ok: Number(ok) === 1, spentPico: BigInt(spent), reservedPico: BigInt(reserved) };
  }

  async release(s: Settlement): Promise<void> {
    await this.r.hdel(this.k("resv", s.project, s.periodKey), s.id);
  }

  async spent(project: string, periodKey: string, _periodStart?: number): Promise<bigint> {
    return BigInt((await this.r.get(this.k("spend", project, periodKey))) ?? "0");
  }

  async record(entry: LedgerEntry, settle?: Settlement): Promise<void> {
    const periods = allPeriods(entry.ts);
    const scope = keyScope(entry.project, entry.keyId);
    const keys = [this.k("ledger"), this.k("gen", entry.generationId), ...periods.map((p) => this.k("spend", entry.project, p.key)), ...periods.map((p) => this.k("spend", scope, p.key))];
    if (settle) keys.push(this.k("resv", settle.project, settle.periodKey));
    const json = JSON.stringify(entry, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    await this.r.mgRecord(keys.length, ...keys, json, entry.costPico.toString(), settle?.id ?? "");
  }

  async ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    let start = q.since ? String(q.since) : "-";
    for (;;) {
      const batch = await this.r.xrange(this.k("ledger"), start, "+", "COUNT", 1000);
      for (const [, fields] of batch) {
        const e = JSON.parse(fields[1]!) as LedgerEntry;
        e.costPico = BigInt(e.costPico as unknown as string);
        if ((!q.project || e.project === q.project) && (!q.since || e.ts >= q.since)) out.push(e);
      }
      if (batch.length < 1000) return out;
      start = "(" + batch[batch.length - 1]![0];
    }
  }

  async idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number): Promise<IdempotencyBegin> {
    const [state, response] = await this.r.mgIdemBegin(this.k("idem", scope), hash, owner, leaseMs);
    if (state === "done") return { state, response: JSON.parse(response) as StoredResponse };
    return { state } as IdempotencyBegin;
  }

  async idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number): Promise<void> {
    await this.r.mgIdemComplete(this.k("idem", scope), hash, owner, JSON.stringify(response), ttlMs);
  }

  async idempotencyRelease(scope: string, owner: string): Promise<void> {
    await this.r.mgIdemRelease(this.k("idem", scope), owner);
  }

  /** QUIT when connected (flushes pending replies); a lost connection is just dropped, never waited for. */
  async close(): Promise<void> {
    if (this.r.status === "ready") {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.r.quit().catch(() => {}), new Promise((r) => (timer = setTimeout(r, 2_000)))]);
      clearTimeout(timer);
    }
    this.r.disconnect();
  }
}

function readEpochs(file: string): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(file, "utf8"));
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

function writeEpochs(file: string, epochs: Record<string, string>): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(epochs, null, 2) + "\n");
  renameSync(`${file}.tmp`, file);
}
