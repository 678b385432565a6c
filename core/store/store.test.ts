// One conformance suite, run against every backend (Redis: a real redis-server on a free port).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import Database from "better-sqlite3";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import { periodOf } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import type { LedgerEntry, Store } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });
// Records are written now and read back by the day's or the month's spend: each test runs within one day.
beforeEach(() => awayFromPeriodEnd("day"));

const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  generationId: `gen_${++n}_${Math.random()}`, requestId: "req_1", ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "openai/gpt-4o-mini", provider: "openai", attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0,
  cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.000001", costPico: 1_000_000n,
  latencyMs: 12.5, ttftMs: 3, status: 200, outcome: "ok", sandbox: false, estimated: false, ...over,
});

const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-store-")), "sub", "g.db")),
  redis: () => RedisStore.connect(redis.url, `t${++n}:`),
};

describe.each(Object.keys(backends))("%s store", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });

  it("rate limit: exactly `limit` requests fit a fresh window, then Retry-After says when the next fits", async () => {
    const now = Date.now();
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await store.rateLimit([{ key: `rpm-${kind}`, limit: 5, cost: 1 }], now));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true, false, false]);
    expect(results[0]!.windows[0]!.remaining).toBe(4);
    expect(results[4]!.windows[0]!.remaining).toBe(0);
    // 5 per minute refill one every 12 s.
    expect(results[5]!.retryAfterMs).toBeGreaterThan(11_000);
    expect(results[5]!.retryAfterMs).toBeLessThanOrEqual(12_000);
  });

  it("rate state: reading the windows charges nothing", async () => {
    const now = Date.now();
    await store.rateLimit([{ key: `peek-${kind}`, limit: 5, cost: 2 }], now);
    const a = await store.rateState([{ key: `peek-${kind}`, limit: 5 }, { key: `untouched-${kind}`, limit: 7 }], now);
    const b = await store.rateState([{ key: `peek-${kind}`, limit: 5 }], now);
    expect(a.map((w) => w.remaining)).toEqual([3, 7]);
    expect(b[0]!.remaining).toBe(3);
    expect((await store.rateLimit([{ key: `peek-${kind}`, limit: 5, cost: 3 }], now)).ok).toBe(true); // the 3 were really left
  });

  it("rate limit: a zero-cost charge passes a window in debt and leaves the debt; a refusal says which windows lacked room", async () => {
    const now = Date.now();
    const rpm = { key: `zero-rpm-${kind}`, limit: 5 }, tpm = { key: `zero-tpm-${kind}`, limit: 500 };
    expect((await store.rateLimit([{ ...tpm, cost: 500 }], now)).ok).toBe(true);
    await store.rateAdjust(tpm.key, tpm.limit, 450, now); // 950 really used: in debt by 450 (54 s)
    const zero = await store.rateLimit([{ ...rpm, cost: 1 }, { ...tpm, cost: 0 }], now);
    expect(zero).toMatchObject({ ok: true, refused: [] });
    expect(zero.windows.map((w) => w.remaining)).toEqual([4, 0]);
    const refused = await store.rateLimit([{ ...rpm, cost: 1 }, { ...tpm, cost: 1 }], now);
    expect(refused).toMatchObject({ ok: false, refused: [1] });
    expect(refused.retryAfterMs).toBeGreaterThan(30_000); // the debt is still there
  });

  it("rate limit: a changed limit reads the window's usage at the new limit, raised or lowered, and corrections follow", async () => {
    const now = Date.now();
    const k = `changed-${kind}`;
    const at = (limit: number, cost = 1) => store.rateLimit([{ key: k, limit, cost }], now);
    expect([(await at(2)).ok, (await at(2)).ok, (await at(2)).ok]).toEqual([true, true, false]);
    // Raised to 100: the 2 used leave 98, not the minute rpm 2 owed for them.
    const raised = [];
    for (let i = 0; i < 10; i++) raised.push(await at(100));
    expect(raised.map((r) => r.ok)).toEqual(Array(10).fill(true));
    expect(raised[9]!.windows[0]).toMatchObject({ limit: 100, remaining: 88 });
    expect((await store.rateState([{ key: k, limit: 100 }], now))[0]!.remaining).toBe(88);
    // Lowered to 2: the 12 used are 6 minutes of rpm 2, the next is refused until 11 of them refilled.
    const lowered = await at(2);
    expect(lowered).toMatchObject({ ok: false, refused: [0] });
    expect(lowered.windows[0]).toMatchObject({ limit: 2, remaining: 0 });
    expect(lowered.retryAfterMs).toBeGreaterThan(5 * 60_000);
    expect((await store.rateState([{ key: k, limit: 2 }], now))[0]!.resetMs).toBeGreaterThan(5.5 * 60_000);
    // A correction made at the limit a request was charged under gives back units, whatever the limit is now.
    await store.rateAdjust(k, 100, -11, now);
    expect((await at(2)).ok).toBe(true);
    expect((await at(2)).ok).toBe(false);
  });

  it("rate limit: a changed limit keeps holding as the clock moves, whether the window is charged, refused or only read", async () => {
    const lowered = { key: `lowered-${kind}`, limit: 2 }, raised = { key: `raised-${kind}`, limit: 100 }, viewed = { key: `viewed-${kind}`, limit: 2 };
    // The set-up reads one instant (a loaded host may take longer than the 0.5 s debt between its calls; Redis keeps
    // the keys 1 s past it).
    const t0 = Date.now();
    // 5 requests at rpm 600 owe 0.5 s there (Redis keeps the keys 1 s past that), 150 s at rpm 2.
    for (const k of [lowered.key, viewed.key]) expect((await store.rateLimit([{ key: k, limit: 600, cost: 5 }], t0)).ok).toBe(true);
    expect((await store.rateLimit([{ ...lowered, cost: 1 }], t0)).ok).toBe(false);
    expect((await store.rateState([viewed], t0))[0]!.resetMs).toBeGreaterThan(30_000);
    // 2 requests at rpm 2, raised to 100 (1.2 s of it), refused by the lowered window beside it.
    expect((await store.rateLimit([{ key: raised.key, limit: 2, cost: 2 }], t0)).ok).toBe(true);
    expect(await store.rateLimit([{ ...raised, cost: 1 }, { ...lowered, cost: 1 }], t0)).toMatchObject({ ok: false, refused: [1] });
    await new Promise((r) => setTimeout(r, 2000));
    // Past the old limit's debt (and the keys' old expiry): the lowered windows still owe most of 150 s at rpm 2...
    const refused = await store.rateLimit([{ ...lowered, cost: 1 }], Date.now());
    expect(refused.ok).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(30_000);
    expect((await store.rateState([viewed], Date.now()))[0]!.resetMs).toBeGreaterThan(30_000);
    // ...and the raised one refilled at rpm 100, not at rpm 2's pace (which would leave 98).
    expect((await store.rateState([raised], Date.now()))[0]!.remaining).toBe(100);
  });

  it("a record counts toward its key's budget scope as well as its project's; reserved() reads the holds", async () => {
    const month = periodOf("month", Date.now());
    const project = `kb-${kind}`;
    await store.record(entry({ project, keyId: "k9", costPico: 7_000_000n }));
    await store.record(entry({ project, keyId: "k8", costPico: 1_000_000n }));
    expect(await store.spent(keyScope(project, "k9"), month.key, month.start)).toBe(7_000_000n);
    expect(await store.spent(keyScope(project, "k8"), month.key, month.start)).toBe(1_000_000n);
    expect(await store.spent(project, month.key, month.start)).toBe(8_000_000n);
    const scope = keyScope(project, "k9");
    const r = await store.reserve({ project: scope, periodKey: month.key, periodStart: month.start, id: "h1", amountPico: 2_000_000n, limitPico: 10_000_000n, leaseMs: 60_000 }, Date.now());
    expect(r).toMatchObject({ ok: true, spentPico: 7_000_000n });
    expect(await store.reserved(scope, month.key, Date.now())).toBe(2_000_000n);
    const over = await store.reserve({ project: scope, periodKey: month.key, periodStart: month.start, id: "h2", amountPico: 2_000_000n, limitPico: 10_000_000n, leaseMs: 60_000 }, Date.now());
    expect(over.ok).toBe(false); // 7 spent + 2 held + 2 > 10
    await store.release({ project: scope, periodKey: month.key, id: "h1" });
    expect(await store.reserved(scope, month.key, Date.now())).toBe(0n);
  });

  it("rate limit: all windows or none are charged", async () => {
    const now = Date.now();
    const key = { key: `k-${kind}`, limit: 100, cost: 1 };
    expect((await store.rateLimit([key, { key: `t-${kind}`, limit: 1000, cost: 900 }], now)).ok).toBe(true);
    const refused = await store.rateLimit([key, { key: `t-${kind}`, limit: 1000, cost: 200 }], now);
    expect(refused.ok).toBe(false);
    expect(refused.windows[0]!.remaining).toBe(99); // the key window was not charged for the refused request
    await store.rateAdjust(`t-${kind}`, 1000, -800, now); // usage turned out smaller
    expect((await store.rateLimit([key, { key: `t-${kind}`, limit: 1000, cost: 200 }], now)).ok).toBe(true);
  });

  it("budget: reservations count against the limit until settled; the ledger is the spend", async () => {
    const now = Date.now();
    const p = periodOf("month", now);
    const project = `b-${kind}-${n++}`;
    const base = { project, periodKey: p.key, periodStart: p.start, limitPico: 10_000_000n, leaseMs: 60_000 };
    expect((await store.reserve({ ...base, id: "r1", amountPico: 6_000_000n }, now)).ok).toBe(true);
    const second = await store.reserve({ ...base, id: "r2", amountPico: 6_000_000n }, now);
    expect(second.ok).toBe(false);
    expect(second.reservedPico).toBe(6_000_000n);
    await store.record(entry({ project, costPico: 2_000_000n, costUsd: "0.000002" }), { project, periodKey: p.key, id: "r1" });
    expect(await store.spent(project, p.key, p.start)).toBe(2_000_000n);
    expect((await store.reserve({ ...base, id: "r3", amountPico: 8_000_000n }, now)).ok).toBe(true);
    await store.release({ project, periodKey: p.key, id: "r3" });
    expect((await store.reserve({ ...base, id: "r4", amountPico: 8_000_000n }, now)).ok).toBe(true);
    expect((await store.reserve({ ...base, id: "r5", amountPico: 1n }, now)).ok).toBe(false);
  });

  it("ledger: one record per generation id, filtered by project and time", async () => {
    const project = `l-${kind}`;
    const e = entry({ project });
    await store.record(e);
    await store.record(e); // a retried write never double-counts
    await store.record(entry({ project: "other" }));
    const rows = await store.ledger({ project });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual(e);
    const p = periodOf("total", Date.now());
    expect(await store.spent(project, p.key, p.start)).toBe(e.costPico);
    expect(await store.ledger({ project, since: Date.now() + 60_000 })).toHaveLength(0);
  });

  it("idempotency: claim, duplicate waits, mismatch, replay after completion, release on failure", async () => {
    const now = Date.now();
    const scope = `s-${kind}`;
    expect(await store.idempotencyBegin(scope, "h1", "o1", 60_000, now)).toEqual({ state: "new" });
    expect(await store.idempotencyBegin(scope, "h1", "o2", 60_000, now)).toMatchObject({ state: "pending" });
    expect(await store.idempotencyBegin(scope, "h2", "o2", 60_000, now)).toEqual({ state: "mismatch" });
    const response = { kind: "stream" as const, status: 200, headers: {}, events: [{ data: '{"a":1}' }, { data: "[DONE]" }] };
    await store.idempotencyComplete(scope, "h1", "o1", response, 60_000, now);
    expect(await store.idempotencyBegin(scope, "h1", "o3", 60_000, now)).toEqual({ state: "done", response });
    expect(await store.idempotencyBegin(scope, "h2", "o3", 60_000, now)).toEqual({ state: "mismatch" });

    const failed = `f-${kind}`;
    expect((await store.idempotencyBegin(failed, "h", "o1", 60_000, now)).state).toBe("new");
    await store.idempotencyRelease(failed, "o2"); // not the owner: no effect
    expect((await store.idempotencyBegin(failed, "h", "o2", 60_000, now)).state).toBe("pending");
    await store.idempotencyRelease(failed, "o1");
    expect((await store.idempotencyBegin(failed, "h", "o2", 60_000, now)).state).toBe("new");
  });

  it("memos: kept until they expire, replaced by a later put, absent keys left out", async () => {
    const now = Date.now();
    const k = (s: string) => `${kind}:${s}`;
    await store.memos.put(k("a"), "one", 60_000, now);
    await store.memos.put(k("b"), "two", 60_000, now);
    await store.memos.put(k("b"), "three", 60_000, now);
    await store.memos.put(k("gone"), "x", 1, now - 10_000); // already expired
    expect(await store.memos.get([k("a"), k("b"), k("gone"), k("never")], now)).toEqual(new Map([[k("a"), "one"], [k("b"), "three"]]));
    expect(await store.memos.get([], now)).toEqual(new Map());
  });
});

describe("memory store memos", () => {
  it("are bounded: the oldest go first", async () => {
    const store = new MemoryStore();
    const now = Date.now();
    for (let i = 0; i < 10_005; i++) await store.memos.put(`m${i}`, "v", 60_000, now);
    const got = await store.memos.get(["m0", "m4", "m5", "m10004"], now);
    expect([...got.keys()]).toEqual(["m5", "m10004"]);
  });
});

describe("sqlite durability", () => {
  it("ledger, spend, finished idempotency records and memos survive reopening the file", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-store-")), "g.db");
    const a = new SqliteStore(file);
    const e = entry({ project: "dur" });
    await a.record(e);
    await a.idempotencyBegin("scope", "h", "o", 1000, Date.now());
    await a.idempotencyComplete("scope", "h", "o", { kind: "json", status: 200, headers: {}, body: { x: 1 } }, 60_000, Date.now());
    await a.memos.put("memo", "kept", 60_000, Date.now());
    await a.close();
    const b = new SqliteStore(file);
    const p = periodOf("day", Date.now());
    expect(await b.ledger({ project: "dur" })).toEqual([e]);
    expect(await b.spent("dur", p.key, p.start)).toBe(e.costPico);
    expect(await b.idempotencyBegin("scope", "h", "o2", 1000, Date.now())).toEqual({ state: "done", response: { kind: "json", status: 200, headers: {}, body: { x: 1 } } });
    expect(await b.memos.get(["memo"], Date.now())).toEqual(new Map([["memo", "kept"]]));
    await b.close();
  });

  it("a ledger written before web searches were billed gains the column; its records count none", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-store-")), "g.db");
    const a = new SqliteStore(file);
    const old = entry({ project: "old" });
    await a.record(old);
    await a.close();
    const db = new Database(file);
    db.exec("DROP VIEW ledger_all; ALTER TABLE ledger DROP COLUMN web_searches"); // the file as an earlier release left it
    db.close();
    const b = new SqliteStore(file);
    const searched = entry({ project: "old", webSearches: 7 });
    await b.record(searched);
    expect(await b.ledger({ project: "old" })).toEqual([old, searched]);
    await b.close();
  });

  it("a ledger written before guardrails gains their column; what a guardrail did comes back, records without it have none", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-store-")), "g.db");
    const a = new SqliteStore(file);
    const old = entry({ project: "old" });
    await a.record(old);
    await a.close();
    const db = new Database(file);
    db.exec("DROP VIEW ledger_all; ALTER TABLE ledger DROP COLUMN guardrail"); // the file as an earlier release left it
    db.close();
    const b = new SqliteStore(file);
    const refused = entry({ project: "old", outcome: "blocked", guardrail: "block:no-secrets,redact:pii" });
    await b.record(refused);
    expect(await b.ledger({ project: "old" })).toEqual([old, refused]);
    await b.close();
  });
});
