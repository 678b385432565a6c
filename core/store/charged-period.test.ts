// A request admitted before midnight and recorded after it spends the day that reserved it (issue: the audit's
// $1.2/day budget showed $1.736 spent on the new day): on every store, on a SQLite file reopened (spend summed from the
// ledger again), and in a spend rebuilt from the Postgres ledger after Redis lost it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import { PostgresLedger } from "./postgres-ledger.ts";
import { chargedAtOf, periodOf } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import type { Store } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres.ts";

const MIDNIGHT = Date.UTC(2026, 11, 1); // Tuesday 2026-12-01: a new day and a new month, the same ISO week
const BEFORE = MIDNIGHT - 9_000; // 23:59:51
const AFTER = MIDNIGHT + 5_000; // 00:00:05
let n = 0;
const rec = (ts: number, costPico: bigint, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  generationId: `gen_cp_${++n}_${Math.random()}`, requestId: `req_${n}`, ts, keyId: "k1", project: "acme", endpoint: "chat", model: "m",
  provider: "p", attempts: 1, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0", costPico, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok",
  sandbox: false, estimated: false, ...over,
});

/** A: held at 23:59:51, recorded at 00:00:05 (cost 7); B: held and recorded after midnight (cost 5). */
const crossing = () => [rec(AFTER, 7_000_000n, { chargedAt: chargedAtOf(BEFORE, AFTER) }), rec(AFTER + 1000, 5_000_000n)];

async function spentIn(store: Store, scope: string, period: "day" | "week" | "month", at: number): Promise<bigint> {
  const w = periodOf(period, at);
  return store.spent(scope, w.key, w.start);
}

let redis: TestRedis;
let postgres: TestPostgres;
beforeAll(async () => { [redis, postgres] = await Promise.all([startRedis(), startPostgres()]); });
afterAll(async () => { await Promise.all([redis?.stop(), postgres?.stop()]); });

describe("chargedAtOf", () => {
  it("is set only when the hold was made on an earlier UTC day than the record", () => {
    expect(chargedAtOf(BEFORE, AFTER)).toBe(BEFORE);
    expect(chargedAtOf(MIDNIGHT + 1, AFTER)).toBeUndefined();
    expect(chargedAtOf(AFTER + 10, AFTER)).toBeUndefined(); // a clock stepped back: charged at ts
  });
});

const sqlitePath = () => join(mkdtempSync(join(tmpdir(), "mg-cp-")), "g.db");
const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(sqlitePath(), { fsync: false }),
  redis: () => RedisStore.connect(redis.url, `cp${++n}:`),
};

describe.each(Object.keys(backends))("%s store", (kind) => {
  it("charges a record to the periods its hold was made in, for the project and its key", async () => {
    const store = await backends[kind]!();
    try {
      for (const scope of ["acme", keyScope("acme", "k1")]) {
        // What a running store has read by then (SQLite caches the sums): the periods A was held in, then B's.
        await spentIn(store, scope, "day", BEFORE);
        for (const p of ["day", "week", "month"] as const) await spentIn(store, scope, p, AFTER);
      }
      for (const e of crossing()) await store.record(e);
      for (const scope of ["acme", keyScope("acme", "k1")]) {
        expect(await spentIn(store, scope, "day", AFTER)).toBe(5_000_000n); // the new day: B only
        expect(await spentIn(store, scope, "month", AFTER)).toBe(5_000_000n);
        expect(await spentIn(store, scope, "day", BEFORE)).toBe(7_000_000n); // the day that held A
        expect(await spentIn(store, scope, "week", AFTER)).toBe(12_000_000n); // the same week
      }
      // The ledger keeps the record's own time.
      expect((await store.ledger({ project: "acme" })).map((e) => e.ts)).toEqual([AFTER, AFTER + 1000]);
    } finally {
      await store.close();
    }
  });
});

describe("spend summed again from the ledger", () => {
  it("SQLite: a reopened file sums each period as the running store counted it", async () => {
    const path = sqlitePath();
    const first = new SqliteStore(path, { fsync: false });
    for (const e of crossing()) await first.record(e);
    await first.close();
    const again = new SqliteStore(path, { fsync: false });
    try {
      expect(await spentIn(again, "acme", "day", AFTER)).toBe(5_000_000n);
      expect(await spentIn(again, keyScope("acme", "k1"), "month", AFTER)).toBe(5_000_000n);
      expect(await spentIn(again, "acme", "week", AFTER)).toBe(12_000_000n);
      const [a] = await again.ledger({ project: "acme" });
      expect(a).toMatchObject({ ts: AFTER, chargedAt: BEFORE });
    } finally {
      await again.close();
    }
  });

  it("SQLite: after the clock stepped back across midnight, the earlier day and month count only what they held", async () => {
    const path = sqlitePath();
    const first = new SqliteStore(path, { fsync: false });
    for (const e of crossing()) await first.record(e);
    await first.close();
    // Restarted at 23:59:30 on the same file: November's day and month are current again.
    const again = new SqliteStore(path, { fsync: false });
    try {
      for (const scope of ["acme", keyScope("acme", "k1")]) {
        expect(await spentIn(again, scope, "day", MIDNIGHT - 30_000)).toBe(7_000_000n); // A, held on the 30th; not B
        expect(await spentIn(again, scope, "month", MIDNIGHT - 30_000)).toBe(7_000_000n);
        expect(await spentIn(again, scope, "week", MIDNIGHT - 30_000)).toBe(12_000_000n); // the same week
      }
    } finally {
      await again.close();
    }
  });

  it("Postgres: the spend rebuilt for the current periods leaves out what an earlier period held", async () => {
    const url = await postgres.createDatabase();
    const ledger = await PostgresLedger.open({ url, spoolDir: mkdtempSync(join(tmpdir(), "mg-cp-pg-")), flushIntervalMs: 10 });
    try {
      const [a, b] = crossing();
      for (const e of [a!, b!]) await ledger.append(e);
      await ledger.flush();
      expect(await ledger.get(a!.generationId)).toMatchObject({ ts: AFTER, chargedAt: BEFORE });
      const rows = await ledger.periodSpend(AFTER + 60_000);
      const of = (project: string, key: string) => rows.find((r) => r.project === project && r.periodKey === key)?.pico;
      for (const scope of ["acme", keyScope("acme", "k1")]) {
        expect(of(scope, periodOf("day", AFTER).key)).toBe(5_000_000n);
        expect(of(scope, periodOf("month", AFTER).key)).toBe(5_000_000n);
        expect(of(scope, periodOf("week", AFTER).key)).toBe(12_000_000n);
        expect(of(scope, "total")).toBe(12_000_000n);
      }
      // Rebuilt at 23:59:30 after the clock stepped back across midnight: November's day and month hold A, not B.
      const back = await ledger.periodSpend(MIDNIGHT - 30_000);
      const then = (project: string, key: string) => back.find((r) => r.project === project && r.periodKey === key)?.pico;
      for (const scope of ["acme", keyScope("acme", "k1")]) {
        expect(then(scope, periodOf("day", BEFORE).key)).toBe(7_000_000n);
        expect(then(scope, periodOf("month", BEFORE).key)).toBe(7_000_000n);
        expect(then(scope, periodOf("week", BEFORE).key)).toBe(12_000_000n);
        expect(then(scope, "total")).toBe(12_000_000n);
      }
    } finally {
      await ledger.close();
    }
  });
});
