// A budget hold counts against every period containing its request's admission, whatever period it was made under: a
// reload that changes a budget from day to week (or week to month) while a request runs must still see its hold, or
// the same request is admitted beside it and the two spend past the limit. A hold admitted in an earlier period
// (yesterday, for a daily budget) still does not count against the new one: its cost is charged where it was admitted.
// On Redis a hold admitted yesterday under a daily budget is not counted against a weekly one either (one layout
// with the previous release: docs/policies.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import { periodOf } from "./periods.ts";
import type { Period, Store } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });

const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-hold-")), "g.db"), { fsync: false }),
  redis: () => RedisStore.connect(redis.url, `hold${++n}:`),
};

const WEDNESDAY = Date.UTC(2026, 10, 18, 12); // its Tuesday is in the same week and month
const TUESDAY = WEDNESDAY - 86_400_000;
const key = (p: Period, at: number) => periodOf(p, at).key;

describe.each(Object.keys(backends))("%s store: budget holds across periods", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });

  const hold = (scope: string, id: string, period: Period, at: number, amountPico: bigint) => {
    const w = periodOf(period, at);
    return store.reserve({ project: scope, periodKey: w.key, periodStart: w.start, id, amountPico, limitPico: 100n, leaseMs: 60_000, at }, Date.now());
  };
  // Asked at the moment the holds were made, as the budget plugin asks at its request's.
  const reserved = (scope: string, period: Period, at = WEDNESDAY) => store.reserved(scope, key(period, at), at);

  it("a hold made under the day counts against the week, month and total containing it, until released", async () => {
    expect(await hold("acme", "wed", "day", WEDNESDAY, 60n)).toEqual({ ok: true, spentPico: 0n, reservedPico: 60n });
    expect(await reserved("acme", "day")).toBe(60n);
    for (const p of ["week", "month", "total"] as const) expect(await reserved("acme", p), p).toBe(60n);

    // The budget now weekly (a reload): the same request does not fit beside the hold.
    expect(await hold("acme", "again", "week", WEDNESDAY, 50n)).toEqual({ ok: false, spentPico: 0n, reservedPico: 60n });

    await store.release({ project: "acme", periodKey: key("day", WEDNESDAY), id: "wed" });
    expect(await reserved("acme", "week")).toBe(0n);
    expect(await hold("acme", "again", "week", WEDNESDAY, 50n)).toEqual({ ok: true, spentPico: 0n, reservedPico: 50n });
    // And back to daily: the hold made under the week still counts against today.
    expect(await hold("acme", "later", "day", WEDNESDAY, 60n)).toEqual({ ok: false, spentPico: 0n, reservedPico: 50n });
    await store.release({ project: "acme", periodKey: key("week", WEDNESDAY), id: "again" });
    expect(await reserved("acme", "total")).toBe(0n);
  });

  it("a hold admitted yesterday under a daily budget: not today's; the week's on memory and SQLite, not on Redis", async () => {
    expect((await hold("delta", "tue", "day", TUESDAY, 30n)).ok).toBe(true);
    // Wednesday's day does not see Tuesday's hold: a daily budget starts each day with only what began in it.
    expect(await hold("delta", "wed", "day", WEDNESDAY, 60n)).toEqual({ ok: true, spentPico: 0n, reservedPico: 60n });
    expect(await reserved("delta", "day", TUESDAY)).toBe(30n);
    // Redis keeps a hold in the hash of the period it was admitted under (the previous release's layout, shared
    // with its replicas) and a weekly budget reads today's hashes: yesterday's day is not one (docs/policies.md).
    expect(await reserved("delta", "week")).toBe(kind === "redis" ? 60n : 90n);
    await store.release({ project: "delta", periodKey: key("day", TUESDAY), id: "tue" });
    await store.release({ project: "delta", periodKey: key("day", WEDNESDAY), id: "wed" });
    expect(await reserved("delta", "total")).toBe(0n);
  });

  it("a record settles its hold whatever period the budget has now", async () => {
    expect((await hold("beta", "gen-1", "day", WEDNESDAY, 40n)).ok).toBe(true);
    expect(await reserved("beta", "month")).toBe(40n);
    await store.record({
      generationId: "gen-1", requestId: "req-1", ts: WEDNESDAY, keyId: "k1", project: "beta", endpoint: "chat", model: "openai/gpt-4o-mini",
      provider: "openai", attempts: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
      videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.00000000001", costPico: 10n, latencyMs: 1, ttftMs: null, status: 200,
      outcome: "ok", sandbox: false, estimated: false,
    }, { project: "beta", periodKey: key("day", WEDNESDAY), id: "gen-1" });
    expect(await reserved("beta", "month")).toBe(0n);
  });
});

describe("redis store beside the previous release", () => {
  it("counts the holds an older replica keeps per period while it still runs beside this one", async () => {
    const r = new Redis(redis.url);
    try {
      const prefix = `legacy${++n}:`;
      const s = await RedisStore.connect(redis.url, prefix);
      try {
        const w = periodOf("day", WEDNESDAY);
        await r.hset(`${prefix}resv:acme:${w.key}`, "old", `70:${Date.now() + 60_000}`);
        expect(await s.reserved("acme", w.key, Date.now())).toBe(70n);
        const refused = await s.reserve({ project: "acme", periodKey: w.key, periodStart: w.start, id: "new", amountPico: 40n, limitPico: 100n, leaseMs: 60_000, at: WEDNESDAY }, Date.now());
        expect(refused).toEqual({ ok: false, spentPico: 0n, reservedPico: 70n });
      } finally {
        await s.close();
      }
    } finally {
      r.disconnect();
    }
  });
});
