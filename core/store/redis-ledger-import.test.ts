// Against a real redis-server and postgresql: an installation on Redis that adds store.ledger: postgres keeps its
// earlier usage (the Redis ledger stream's records are imported into Postgres once, or a warning says how), and a
// Redis or Postgres ledger a newer release stamped is refused at start, by check and by usage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { createStore } from "./index.ts";
import { SplitLedgerStore } from "./ledger-split.ts";
import { storeSchemaProblem } from "./schema-check.ts";
import { SCHEMA_VERSION } from "./schema-version.ts";
import type { Logger } from "../log.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres.ts";

let redis: TestRedis;
let postgres: TestPostgres;
let admin: Redis;
beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  admin = new Redis(redis.url);
}, 60_000);
afterAll(async () => {
  admin?.disconnect();
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

let n = 0;
const rec = (): LedgerRecord => ({
  generationId: `gen_${++n}_${Math.random()}`, requestId: `req_${n}`, ts: Date.now(), keyId: "k", project: "acme", endpoint: "chat", model: "m",
  provider: "p", attempts: 1, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.05", costPico: 50_000_000_000n, latencyMs: 1, ttftMs: null, status: 200,
  outcome: "ok", sandbox: false, estimated: false,
});
const Q = { since: 0, until: Date.now() + 86_400_000, bucket: "none" as const, groupBy: [] };

function logger(): { log: Logger; lines: { level: string; msg: string; data?: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; data?: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, data?: Record<string, unknown>) => void lines.push({ level, msg, data });
  const log = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log } as unknown as Logger;
  return { log, lines };
}

const serving = (spoolDir: string, log: Logger) => ({ spoolDir, log, verify: { integrity: "off" as const, requirePersistence: false, epochFile: join(spoolDir, "epochs.json") } });

describe("adding store.ledger: postgres to a Redis installation", () => {
  it("imports the records the Redis ledger held into an empty Postgres ledger once: usage keeps them", async () => {
    const prefix = `imp${++n}:`;
    const redisOnly: StoreConfig = { kind: "redis", url: redis.url, prefix };
    const dir = mkdtempSync(join(tmpdir(), "mg-import-"));
    const before = await createStore(redisOnly, dir);
    for (let i = 0; i < 3; i++) await before.record(rec());
    expect((await before.usage(Q))[0]?.requests).toBe(3);
    await before.close();

    const split: StoreConfig = { ...redisOnly, ledger: { kind: "postgres", url: await postgres.createDatabase() } };
    for (let start = 0; start < 2; start++) {
      const { log, lines } = logger();
      const store = await createStore(split, dir, undefined, serving(dir, log));
      await (store as SplitLedgerStore).importing;
      const [row] = await store.usage(Q);
      expect({ requests: row?.requests, costUsd: row?.costUsd }).toEqual({ requests: 3, costUsd: "0.15" });
      if (start === 0) expect(lines.some((l) => l.level === "warn" && /importing them into Postgres/.test(l.msg))).toBe(true);
      await store.close();
    }
  });

  it("a Postgres ledger that already holds records is left as it is, with a warning saying how to bring them over", async () => {
    const prefix = `warn${++n}:`;
    const dir = mkdtempSync(join(tmpdir(), "mg-import-"));
    const before = await createStore({ kind: "redis", url: redis.url, prefix }, dir);
    await before.record(rec());
    await before.close();
    const url = await postgres.createDatabase();
    const split: StoreConfig = { kind: "redis", url: redis.url, prefix: `other${n}:`, ledger: { kind: "postgres", url } };
    const first = await createStore(split, dir, undefined, serving(dir, logger().log));
    await first.record(rec());
    await (first as SplitLedgerStore).importing;
    await first.close();
    // As a ledger that took records before the import existed has it: no import mark.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query("DELETE FROM mg_meta WHERE name = 'redis_ledger_import'");
    await c.end();

    const { log, lines } = logger();
    const store = await createStore({ ...split, prefix }, dir, undefined, serving(dir, log));
    await (store as SplitLedgerStore).importing;
    expect((await store.usage(Q))[0]?.requests).toBe(1);
    expect(lines.some((l) => l.level === "warn" && /holds 1 records from before store\.ledger: postgres.*INSERT INTO mg_meta/.test(l.msg))).toBe(true);
    await store.close();
  });
});

describe("the Redis ledger import when Postgres is down, or several gateways start", () => {
  it("Postgres down at the first start with store.ledger: the records still come over once it answers", async () => {
    const prefix = `down${++n}:`;
    const dir = mkdtempSync(join(tmpdir(), "mg-import-"));
    // Served before (its epoch known here): a start while Postgres is down needs no spend rebuild from it.
    const before = await createStore({ kind: "redis", url: redis.url, prefix }, dir, undefined, serving(dir, logger().log));
    for (let i = 0; i < 3; i++) await before.record(rec());
    await before.close();
    const split: StoreConfig = { kind: "redis", url: redis.url, prefix, ledger: { kind: "postgres", url: await postgres.createDatabase() } };

    await postgres.kill();
    let first: SplitLedgerStore | undefined;
    try {
      first = (await createStore(split, dir, undefined, serving(dir, logger().log))) as SplitLedgerStore;
      await first.record(rec()); // spooled: Postgres will not be empty by the time it answers
    } finally {
      await postgres.restart();
    }
    await first.ledgerStore.flush(20_000);
    await first.close();

    const { log, lines } = logger();
    const store = (await createStore(split, dir, undefined, serving(dir, log))) as SplitLedgerStore;
    await store.importing;
    expect((await store.usage(Q))[0]?.requests).toBe(4);
    expect(lines.some((l) => /INSERT INTO mg_meta/.test(l.msg))).toBe(false);
    await store.close();
  }, 60_000);

  it("store.ledger.pool_size: 1 imports at once: the lock's connection is not the pool's only one", async () => {
    const prefix = `pool1${++n}:`;
    const dir = mkdtempSync(join(tmpdir(), "mg-import-"));
    const before = await createStore({ kind: "redis", url: redis.url, prefix }, dir);
    for (let i = 0; i < 3; i++) await before.record(rec());
    await before.close();
    const split: StoreConfig = { kind: "redis", url: redis.url, prefix, ledger: { kind: "postgres", url: await postgres.createDatabase(), pool_size: 1 } };
    const { log, lines } = logger();
    const store = (await createStore(split, dir, undefined, serving(dir, log))) as SplitLedgerStore;
    try {
      // Before: the writes waited 5 s for the connection the lock held, the import failed and was retried a minute on.
      const imported = await Promise.race([store.importing, new Promise((r) => setTimeout(r, 15_000, "still waiting"))]);
      expect(imported).toBe(3);
      expect(lines.filter((l) => /failed/.test(l.msg)).map((l) => l.msg)).toEqual([]);
      expect((await store.usage(Q))[0]?.requests).toBe(3);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("two gateways starting together read the stream once between them", async () => {
    const prefix = `two${++n}:`;
    const dir = mkdtempSync(join(tmpdir(), "mg-import-"));
    const before = await createStore({ kind: "redis", url: redis.url, prefix }, dir);
    for (let i = 0; i < 1500; i++) await before.record(rec());
    await before.close();
    const split: StoreConfig = { kind: "redis", url: redis.url, prefix, ledger: { kind: "postgres", url: await postgres.createDatabase() } };
    const logs = [logger(), logger()];
    const stores = (await Promise.all(logs.map(({ log }, i) => createStore(split, dir, undefined, serving(join(dir, `r${i}`), log))))) as SplitLedgerStore[];
    await Promise.all(stores.map((s) => s.importing));
    const read = logs.flatMap(({ lines }) => lines).reduce((sum, l) => sum + Number(l.data?.read ?? 0), 0);
    expect(read).toBe(1500);
    expect((await stores[0]!.usage(Q))[0]?.requests).toBe(1500);
    await Promise.all(stores.map((s) => s.close()));
  }, 60_000);
});

describe("Redis and Postgres schema versions", () => {
  const says = (v: number) => `was written by a newer release (schema 99, this release reads up to ${v}): upgrade, or restore a backup`;

  it("Redis: stamped by a serving gateway; a newer one is refused at start, by check and by usage's open", async () => {
    const prefix = `ver${++n}:`;
    const dir = mkdtempSync(join(tmpdir(), "mg-ver-"));
    const cfg: StoreConfig = { kind: "redis", url: redis.url, prefix };
    await (await createStore(cfg, dir, undefined, serving(dir, logger().log))).close();
    expect(await admin.get(`${prefix}schema`)).toBe(String(SCHEMA_VERSION.redis));
    await admin.set(`${prefix}schema`, "99");
    await expect(createStore(cfg, dir, undefined, serving(dir, logger().log))).rejects.toThrow(says(SCHEMA_VERSION.redis));
    await expect(createStore(cfg, dir)).rejects.toThrow(says(SCHEMA_VERSION.redis));
    expect((await storeSchemaProblem(cfg, dir, join(dir, "gw.yaml")))?.message).toContain(says(SCHEMA_VERSION.redis));
  });

  it("Postgres ledger: stamped at open; a newer one is refused before its tables are touched", async () => {
    const url = await postgres.createDatabase();
    const dir = mkdtempSync(join(tmpdir(), "mg-ver-"));
    const cfg: StoreConfig = { kind: "redis", url: redis.url, prefix: `pgv${++n}:`, ledger: { kind: "postgres", url } };
    await (await createStore(cfg, dir, undefined, serving(dir, logger().log))).close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      expect((await c.query("SELECT value FROM mg_meta WHERE name = 'schema_version'")).rows[0]?.value).toBe(String(SCHEMA_VERSION.postgres));
      await c.query("UPDATE mg_meta SET value = '99' WHERE name = 'schema_version'");
      await c.query("ALTER TABLE mg_ledger DROP COLUMN charged_at");
      await expect(createStore(cfg, dir, undefined, serving(dir, logger().log))).rejects.toThrow(says(SCHEMA_VERSION.postgres));
      await expect(createStore(cfg, dir)).rejects.toThrow(says(SCHEMA_VERSION.postgres));
      expect((await storeSchemaProblem(cfg, dir, join(dir, "gw.yaml")))?.message).toContain(says(SCHEMA_VERSION.postgres));
      // Not migrated: the column this release would have added back is still gone.
      const cols = await c.query("SELECT 1 FROM pg_attribute WHERE attrelid = 'mg_ledger'::regclass AND attname = 'charged_at' AND NOT attisdropped");
      expect(cols.rowCount).toBe(0);
    } finally {
      await c.end();
    }
  });
});
