// Store kind `redis`: several gateway replicas share rate windows, spend, reservations, idempotency records and
// the ledger (a Redis stream). Every check-and-update is one Lua script (redis-scripts.ts), atomic on the server.
// Durability of the ledger is Redis's own: run it with appendonly yes (fsync everysec or always).
import { Redis } from "ioredis";
import { allPeriods } from "./periods.ts";
import { windowState } from "./gcra.ts";
import * as lua from "./redis-scripts.ts";
import { RedisResponseStore } from "./responses-redis.ts";
import { RedisMemoStore } from "./memo-redis.ts";
import type {
  IdempotencyBegin, LedgerEntry, LedgerQuery, RateCharge, RateResult, Reservation, ReserveResult, Settlement, Store, StoredResponse,
} from "./types.ts";

type Cmd = (...args: (string | number)[]) => Promise<any>;
interface Scripts {
  mgRate: Cmd; mgRateAdjust: Cmd; mgReserve: Cmd; mgRecord: Cmd; mgIdemBegin: Cmd; mgIdemComplete: Cmd; mgIdemRelease: Cmd;
}

export class RedisStore implements Store {
  readonly kind = "redis" as const;
  private readonly r: Redis & Scripts;
  readonly responses: RedisResponseStore;
  readonly memos: RedisMemoStore;

  private constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand("mgRate", { lua: lua.RATE_LIMIT });
    redis.defineCommand("mgRateAdjust", { lua: lua.RATE_ADJUST, numberOfKeys: 1 });
    redis.defineCommand("mgReserve", { lua: lua.RESERVE, numberOfKeys: 2 });
    redis.defineCommand("mgRecord", { lua: lua.RECORD });
    redis.defineCommand("mgIdemBegin", { lua: lua.IDEM_BEGIN, numberOfKeys: 1 });
    redis.defineCommand("mgIdemComplete", { lua: lua.IDEM_COMPLETE, numberOfKeys: 1 });
    redis.defineCommand("mgIdemRelease", { lua: lua.IDEM_RELEASE, numberOfKeys: 1 });
    this.r = redis as Redis & Scripts;
    this.responses = new RedisResponseStore(redis, prefix);
    this.memos = new RedisMemoStore(redis, prefix);
  }

  /** Connect and check the server answers; a wrong URL fails the boot with a clear message. */
  static async connect(url: string, prefix = "mg:"): Promise<RedisStore> {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3, connectTimeout: 5_000 });
    redis.on("error", () => {}); // reconnects on its own; failing commands surface per request
    try {
      await redis.connect();
      await redis.ping();
    } catch (err) {
      redis.disconnect();
      throw new Error(`store: cannot reach Redis at ${url.replace(/\/\/[^@]*@/, "//***@")}: ${(err as Error).message}`);
    }
    return new RedisStore(redis, prefix);
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
    const keys = [this.k("ledger"), this.k("gen", entry.generationId), ...allPeriods(entry.ts).map((p) => this.k("spend", entry.project, p.key))];
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
