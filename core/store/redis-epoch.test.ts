// Redis's epoch against a real redis-server: after a data loss (spend rebuilt from the ledger under a new epoch), an
// operator restoring an older backup brings back older spend under the old epoch; replicas must not trust it.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { RedisStore, type SpendSource } from "./redis.ts";
import { readEpochs } from "./epoch-file.ts";
import { allPeriods, periodOf } from "./periods.ts";
import { StoreStateLostError } from "./unavailable.ts";
import type { LedgerEntry } from "./types.ts";
import type { Logger } from "../log.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

let redis: TestRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});
// Spend is recorded (or rebuilt) now and read back by the month's key: each test runs within one month.
beforeEach(() => awayFromPeriodEnd("month"));

let n = 0;
const USD = 1_000_000_000_000n;
const entry = (costPico: bigint): LedgerEntry => ({
  generationId: `gen_${++n}_${Math.random()}`, requestId: "req", ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "m", provider: "p", attempts: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
  images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "1", costPico, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok",
  sandbox: false, estimated: false,
});

/** The ledger (Postgres in production): every record, summed per period. */
class Ledger implements SpendSource {
  total = 0n;
  async flush(): Promise<void> {}
  async periodSpend(now: number) {
    return allPeriods(now).map((p) => ({ project: "acme", periodKey: p.key, pico: this.total }));
  }
}

/** A backup of every key under `prefix` (DUMP with its expiry), and putting it back over whatever is there. */
async function backup(prefix: string): Promise<() => Promise<void>> {
  const keys = await admin.keys(`${prefix}*`);
  const saved = await Promise.all(keys.map(async (k) => ({ k, v: (await admin.dumpBuffer(k))!, ttl: await admin.pttl(k) })));
  return async () => {
    const now = await admin.keys(`${prefix}*`);
    if (now.length) await admin.del(...now);
    for (const s of saved) await admin.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.v);
  };
}

const verify = (s: RedisStore, epochFile: string) => s.verify({ integrity: "off", requirePersistence: true, epochFile });
const epochFile = () => join(mkdtempSync(join(tmpdir(), "mg-epoch-")), "store-epochs.json");

describe("Redis restored from an older backup", () => {
  it("with a ledger: spend is rebuilt again (budgets see the spend since the backup), and the epoch file follows each change", async () => {
    const prefix = "restore1:";
    const ledger = new Ledger();
    const files = [epochFile(), epochFile()];
    const [a, b] = await Promise.all([0, 1].map(() => RedisStore.connect(redis.url, prefix, { spendSource: ledger })));
    try {
      await verify(a!, files[0]!);
      await verify(b!, files[1]!);
      const rebuilds = () => a!.rebuilt + b!.rebuilt - 1; // the first start's (an empty Redis) aside
      const month = periodOf("month", Date.now()).key;
      const spend = async (s: RedisStore, usd: bigint) => {
        await s.record(entry(usd * USD));
        ledger.total += usd * USD;
      };
      const epochIn = (file: string) => Object.values(readEpochs(file))[0];
      await spend(a!, 5n);
      const restore = await backup(prefix);
      const first = await admin.get(`${prefix}epoch`);

      // Data loss: both replicas notice; one rebuilds spend under a new epoch, the other takes it as it is.
      await admin.flushall();
      await a!.probe();
      await b!.probe();
      const second = await admin.get(`${prefix}epoch`);
      expect(second).not.toBe(first);
      expect(rebuilds()).toBe(1);
      // A replica restarted now must know the new epoch, not the one it saw at start.
      expect(files.map(epochIn)).toEqual([second, second]);
      await spend(b!, 7n);
      await spend(a!, 2n);
      expect(await a!.spent("acme", month)).toBe(14n * USD);

      // The operator restores the backup taken before the loss: its epoch, its spend marked current, $5 of $14.
      await restore();
      expect(await admin.get(`${prefix}epoch`)).toBe(first);
      expect(await admin.get(`${prefix}spend:acme:${month}`)).toBe((5n * USD).toString());
      await a!.probe();
      await b!.probe();
      expect(await a!.spent("acme", month)).toBe(14n * USD);
      expect(await b!.spent("acme", month)).toBe(14n * USD);
      expect(rebuilds()).toBe(2); // once, not by each replica
      expect(files.map(epochIn)).toEqual([first, first]);

      // A replica that restarts now trusts the rebuilt counters (no third rebuild); spend goes on from $14.
      const c = await RedisStore.connect(redis.url, prefix, { spendSource: ledger });
      try {
        await verify(c, files[0]!);
        expect(c.rebuilt).toBe(0);
        await spend(c, 1n);
        expect(await a!.spent("acme", month)).toBe(15n * USD);
      } finally {
        await c.close();
      }
    } finally {
      await a!.close();
      await b!.close();
    }
  }, 30_000);

  it("without a ledger: the restored backup is state_lost, not served", async () => {
    const prefix = "restore2:";
    const s = await RedisStore.connect(redis.url, prefix);
    const restore = await (async () => {
      await verify(s, epochFile());
      await s.record(entry(5n * USD));
      return backup(prefix);
    })().finally(() => s.close());
    await admin.flushall();
    // The operator accepted the reset (a fresh epoch file): a new epoch, new spend.
    const t = await RedisStore.connect(redis.url, prefix);
    try {
      await verify(t, epochFile());
      await t.record(entry(3n * USD));
      await restore();
      await expect(t.probe()).rejects.toBeInstanceOf(StoreStateLostError);
    } finally {
      await t.close();
    }
  }, 30_000);
});

describe("the data-loss warning", () => {
  const logger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() }) as unknown as Logger & Record<"info" | "warn", ReturnType<typeof vi.fn>>;
  const said = (fn: ReturnType<typeof vi.fn>) => fn.mock.calls.map((c) => String(c[0]));

  it("a brand-new deployment (new prefix, no epoch file, an empty ledger) is not told its Redis lost anything; a real loss is", async () => {
    const prefix = "fresh1:";
    const log = logger();
    const s = await RedisStore.connect(redis.url, prefix, { spendSource: new Ledger(), log });
    try {
      await verify(s, epochFile());
      expect(said(log.warn)).toEqual([]);
      expect(said(log.info)).toEqual([expect.stringMatching(/holds no gateway state yet \(a new server or prefix\)/)]);

      // Redis loses the gateway's keys while it runs: that is a loss, said at warn.
      const keys = await admin.keys(`${prefix}*`);
      await admin.del(...keys);
      await s.probe();
      expect(said(log.warn)).toEqual([expect.stringMatching(/Redis no longer held the spend this gateway saw/)]);
    } finally {
      await s.close();
    }
  }, 30_000);

  it("a new prefix over a ledger that has spend says the spend was rebuilt, without claiming this gateway saw it lost", async () => {
    const ledger = new Ledger();
    ledger.total = 3n * USD;
    const log = logger();
    const s = await RedisStore.connect(redis.url, "fresh2:", { spendSource: ledger, log });
    try {
      await verify(s, epochFile());
      expect(await s.spent("acme", periodOf("month", Date.now()).key)).toBe(3n * USD);
      expect(said(log.warn)).toEqual([expect.stringMatching(/^store: Redis held no spend counters while the ledger has spend/)]);
    } finally {
      await s.close();
    }
  }, 30_000);
});
