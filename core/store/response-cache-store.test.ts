// The response cache's store, on every backend (Redis: a real redis-server on a free port): values by key until they
// expire; SQLite and memory bounded by their byte total (least recently used first); SQLite durable across reopening.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import Database from "better-sqlite3";
import type { LedgerEntry, Store } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });

const dir = mkdtempSync(join(tmpdir(), "mg-cache-store-"));
const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(dir, `c${++n}.db`)),
  redis: () => RedisStore.connect(redis.url, `rc${++n}:`),
};

describe.each(Object.keys(backends))("%s store: response cache", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });

  it("keeps a value under its key until it expires; a later put replaces it", async () => {
    const now = Date.now();
    await store.responseCache.put("a", "first", 60_000, now);
    await store.responseCache.put("a", "second", 60_000, now);
    await store.responseCache.put("b", "other", 60_000, now);
    expect(await store.responseCache.get("a", now)).toBe("second");
    expect(await store.responseCache.get("b", now)).toBe("other");
    expect(await store.responseCache.get("never", now)).toBeUndefined();
  });

  it("an expired value is gone", async () => {
    await store.responseCache.put("short", "v", 150, Date.now());
    expect(await store.responseCache.get("short", Date.now())).toBe("v");
    await new Promise((r) => setTimeout(r, 250));
    expect(await store.responseCache.get("short", Date.now())).toBeUndefined();
  });
});

describe("byte limit", () => {
  const value = (i: number) => `${i}`.padEnd(1000, "x"); // 1000 bytes each

  it("memory: past the limit the least recently used go first", async () => {
    const store = new MemoryStore();
    store.responseCache.setMaxBytes(5_000);
    const now = Date.now();
    for (let i = 0; i < 5; i++) await store.responseCache.put(`k${i}`, value(i), 60_000, now);
    expect(await store.responseCache.get("k0", now)).toBe(value(0)); // used: now the most recent
    await store.responseCache.put("k5", value(5), 60_000, now);
    expect(await store.responseCache.get("k1", now)).toBeUndefined();
    expect(await store.responseCache.get("k0", now)).toBe(value(0));
    expect(await store.responseCache.get("k5", now)).toBe(value(5));
  });

  it("sqlite: past the limit the least recently used rows go; a read since the last sweep counts as use", async () => {
    const store = new SqliteStore(join(dir, "limit.db"));
    try {
      store.responseCache.setMaxBytes(5_000);
      const t = Date.now();
      for (let i = 0; i < 5; i++) await store.responseCache.put(`k${i}`, value(i), 60_000, t + i);
      expect(store.responseCache.bytes).toBe(5_000);
      expect(await store.responseCache.get("k0", t + 10)).toBe(value(0));
      await store.responseCache.put("k5", value(5), 60_000, t + 20);
      expect(store.responseCache.bytes).toBe(5_000);
      expect(await store.responseCache.get("k1", t + 21)).toBeUndefined(); // the oldest not read since
      expect(await store.responseCache.get("k0", t + 21)).toBe(value(0));
      // The sweep writes the read times: k0 is now among the most recent, k2 the least recently used.
      await store.responseCache.sweep(t + 30);
      await store.responseCache.put("k6", value(6), 60_000, t + 40);
      expect(await store.responseCache.get("k2", t + 41)).toBeUndefined();
      expect(await store.responseCache.get("k0", t + 41)).toBe(value(0));
      // A lower limit (a reload) is reached by the next sweep; an entry above the whole limit is not kept.
      store.responseCache.setMaxBytes(2_000);
      await store.responseCache.sweep(t + 50);
      expect(store.responseCache.bytes).toBeLessThanOrEqual(2_000);
      await store.responseCache.put("huge", "y".repeat(3_000), 60_000, t + 60);
      expect(await store.responseCache.get("huge", t + 61)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("redis: past the limit the answers closest to expiry go; answers Redis expired leave the total", async () => {
    const store = await RedisStore.connect(redis.url, `rclimit${++n}:`);
    try {
      store.responseCache.setMaxBytes(3_000);
      const now = Date.now();
      await store.responseCache.put("soon", value(1), 30_000, now);
      await store.responseCache.put("later", value(2), 90_000, now);
      await store.responseCache.put("latest", value(3), 60_000, now);
      expect(await store.responseCache.bytes()).toBe(3_000);
      await store.responseCache.put("new", value(4), 120_000, now);
      expect(await store.responseCache.bytes()).toBe(3_000);
      expect(await store.responseCache.get("soon", now)).toBeUndefined();
      expect(await store.responseCache.get("later", now)).toBe(value(2));
      expect(await store.responseCache.get("new", now)).toBe(value(4));
      // Replacing an answer counts its bytes once.
      await store.responseCache.put("new", value(5), 120_000, now);
      expect(await store.responseCache.bytes()).toBe(3_000);
      // Expired by Redis: gone from the total at the next write.
      store.responseCache.setMaxBytes(4_000);
      await store.responseCache.put("brief", "z".repeat(500), 50, Date.now());
      expect(await store.responseCache.bytes()).toBe(3_500);
      await new Promise((r) => setTimeout(r, 120));
      await store.responseCache.put("small", "s".repeat(100), 90_000, Date.now());
      expect(await store.responseCache.bytes()).toBe(3_100);
    } finally {
      await store.close();
    }
  });

  it("sqlite: the sweep drops expired rows and their bytes; what is live survives reopening the file", async () => {
    const file = join(dir, "durable.db");
    const a = new SqliteStore(file);
    const now = Date.now();
    await a.responseCache.put("live", value(1), 60_000, now);
    await a.responseCache.put("dead", value(2), 10, now - 1_000);
    expect(a.responseCache.bytes).toBe(2_000);
    await a.responseCache.sweep(now);
    expect(a.responseCache.bytes).toBe(1_000);
    await a.close();
    const b = new SqliteStore(file);
    expect(b.responseCache.bytes).toBe(1_000);
    expect(await b.responseCache.get("live", Date.now())).toBe(value(1));
    await b.close();
  });
});

describe("ledger", () => {
  const entry = (id: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
    generationId: id, requestId: `req_${id}`, ts: Date.now(), keyId: "k", project: "hits", endpoint: "chat", model: "m", provider: "cache",
    attempts: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0,
    searchUnits: 0, webSearches: 0, costUsd: "0.001", costPico: 1_000_000_000n, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok",
    sandbox: false, estimated: false, ...over,
  });

  it("sqlite: a ledger from before the response cache gains cache_hit; its records are not hits, new hits are", async () => {
    const file = join(dir, "old-ledger.db");
    const a = new SqliteStore(file);
    const old = entry("old", { provider: "up", attempts: 1 });
    await a.record(old);
    await a.close();
    const db = new Database(file);
    db.exec("DROP VIEW ledger_all; ALTER TABLE ledger DROP COLUMN cache_hit"); // the file as an earlier release left it
    db.close();
    const b = new SqliteStore(file);
    const hit = entry("hit", { cacheHit: true });
    await b.record(hit);
    expect(await b.ledger({ project: "hits" })).toEqual([old, hit]);
    await b.close();
  });
});
