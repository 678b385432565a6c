// The operator plane's reader (usage from rollups, search, get) against every backend: memory, SQLite, Redis
// (its stream ledger) and Redis + Postgres (a real postgresql server). Usage answers must equal the sums of the raw
// records, computed here independently, for every grouping, bucket, filter and range — edges inside days included;
// and a record carries back what other features wrote into it (tool calls, guardrails, cache hits) on every store.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import { createStore } from "./index.ts";
import { SplitLedgerStore } from "./ledger-split.ts";
import { picoToUsd } from "../money/money.ts";
import { GatewayError } from "../errors.ts";
import type { Store } from "./types.ts";
import type { LedgerRecord, UsageDimension, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres.ts";

let redis: TestRedis;
let postgres: TestPostgres;
beforeAll(async () => { [redis, postgres] = await Promise.all([startRedis(), startPostgres()]); });
afterAll(async () => { await Promise.all([redis?.stop(), postgres?.stop()]); });

const H = 3_600_000;
const D = 86_400_000;
/** 2026-03-30 00:00 UTC: records spread over three days and a month boundary (partitions). */
const T0 = Date.UTC(2026, 2, 30);

let seq = 0;
function record(i: number, over: Partial<LedgerRecord> = {}): LedgerRecord {
  // A deterministic spread over projects, keys, models, providers, endpoints, statuses and times.
  const r = (n: number) => (i * 7919 + n * 104729) % 1000;
  const project = ["acme", "beta", "gamma"][i % 3]!;
  const status = r(1) < 80 ? 502 : r(1) < 120 ? 429 : 200;
  const cost = BigInt(r(2) * 1_000_003);
  return {
    generationId: `gen_${String(++seq).padStart(6, "0")}_${i}`, requestId: `req_${i}`, ts: T0 + ((r(3) * 7_777 * 60) % (3 * D)),
    keyId: `${project}-k${r(4) % 2}`, project, endpoint: ["chat", "messages", "embeddings"][r(5) % 3]!, model: ["m/a", "m/b", "m/c", "m/d"][r(6) % 4]!,
    provider: ["p1", "p2"][r(7) % 2]!, attempts: status === 200 ? 1 : 2, inputTokens: r(8), outputTokens: r(9) * 2, cacheReadTokens: r(10) % 7,
    cacheWriteTokens: r(11) % 3, reasoningTokens: r(12) % 5, images: r(13) % 2, videoSeconds: (r(14) % 4) * 0.5, searchUnits: r(15) % 2,
    webSearches: r(16) % 3, costUsd: picoToUsd(cost), costPico: cost, latencyMs: r(17), ttftMs: r(18) % 2 ? null : r(18), status,
    outcome: status === 200 ? (r(19) < 50 ? "aborted" : "ok") : "error", sandbox: r(20) < 100, estimated: false,
    attemptList: [{ model: "m/x", provider: "p9", status: 503, latencyMs: 3, error: "UPSTREAM_ERROR" }, { model: "m/a", provider: "p1", status, latencyMs: 9 }],
    ...over,
  };
}

/**
 * Records as the features beside plain model calls write them (project "omega"): MCP tool calls (result bytes, the
 * arguments with mcp.log_arguments; no webSearches, as core/mcp/tool-call.ts writes them), guardrails (a request
 * refused before any provider, an answer cut after the provider sent it — status 200 — and one only redacted), and
 * answers from the response cache (provider "cache", the hit price).
 */
function featureRecords(): LedgerRecord[] {
  const base = (i: number, over: Partial<LedgerRecord>): LedgerRecord => {
    const { webSearches: _, ...r } = record(i, { project: "omega", keyId: "omega-k0", sandbox: false, estimated: false, ttftMs: null, ts: T0 + D + 5 * H + i * 60_000, ...over });
    return over.webSearches === undefined ? r : { ...r, webSearches: over.webSearches };
  };
  const none = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0 };
  const free = { costUsd: "0", costPico: 0n };
  const hit = (pico: bigint) => ({ costUsd: picoToUsd(pico), costPico: pico });
  return [
    base(1, { endpoint: "mcp_tool", model: "search_docs", provider: "docs", attempts: 1, ...none, ...free, status: 200, outcome: "ok", attemptList: undefined,
      toolBytes: 2048, toolArguments: JSON.stringify({ query: "rate limits", "ünïcode": "✓", nested: { n: [1, 2] } }) }),
    base(2, { endpoint: "responses_mcp_tool", model: "fetch", provider: "web", attempts: 1, ...none, ...free, status: 502, outcome: "error", attemptList: undefined, toolBytes: 17 }),
    base(3, { endpoint: "chat", model: "m/a", provider: "", attempts: 0, ...none, ...free, webSearches: 0, status: 400, outcome: "blocked", attemptList: undefined,
      guardrail: "block:no-secrets" }),
    base(4, { endpoint: "messages", model: "m/b", provider: "p1", attempts: 1, webSearches: 1, status: 200, outcome: "blocked", guardrail: "redact:pii,block:no-secrets" }),
    base(5, { endpoint: "chat", model: "m/b", provider: "p2", attempts: 1, webSearches: 0, status: 200, outcome: "ok", guardrail: "redact:pii" }),
    base(6, { endpoint: "chat", model: "m/a", provider: "cache", attempts: 0, ...none, ...hit(1_000_000n), webSearches: 0, status: 200, outcome: "ok", attemptList: undefined, cacheHit: true }),
    base(7, { endpoint: "responses", model: "m/c", provider: "cache", attempts: 0, ...none, ...hit(2_500_000n), webSearches: 0, status: 200, outcome: "ok", attemptList: undefined, cacheHit: true }),
  ];
}

/** The answer computed from the raw records, the slow obvious way. */
function oracle(records: LedgerRecord[], q: UsageQuery): UsageRow[] {
  const since = Math.floor(q.since / H) * H, until = Math.ceil(q.until / H) * H;
  const dim = (r: LedgerRecord, d: UsageDimension) => (d === "key" ? r.keyId : r[d]);
  const rows = new Map<string, UsageRow>();
  for (const r of records) {
    if (r.ts < since || r.ts >= until || (r.sandbox && !q.includeSandbox)) continue;
    if (Object.entries(q.filter ?? {}).some(([d, v]) => dim(r, d as UsageDimension) !== v)) continue;
    const b = q.bucket === "none" ? undefined : q.bucket === "hour" ? Math.floor(r.ts / H) * H : Math.floor(r.ts / D) * D;
    const group = Object.fromEntries(q.groupBy.map((d) => [d, dim(r, d)]));
    const k = `${b}|${JSON.stringify(group)}`;
    let row = rows.get(k);
    if (!row) {
      rows.set(k, (row = { ...(b === undefined ? {} : { bucketStart: b }), group, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
        cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0", costPico: 0n }));
    }
    row.requests++;
    row.errors += r.status >= 400 || r.outcome !== "ok" ? 1 : 0;
    row.inputTokens += r.inputTokens;
    row.outputTokens += r.outputTokens;
    row.cacheReadTokens += r.cacheReadTokens;
    row.cacheWriteTokens += r.cacheWriteTokens;
    row.reasoningTokens += r.reasoningTokens;
    row.images += r.images;
    row.videoSeconds += r.videoSeconds;
    row.searchUnits += r.searchUnits;
    row.webSearches += r.webSearches ?? 0;
    row.costPico += r.costPico;
    row.costUsd = picoToUsd(row.costPico);
  }
  const key = (r: UsageRow) => `${String(r.bucketStart ?? 0).padStart(16, "0")}|${q.groupBy.map((d) => r.group[d]).join("\u0000")}`;
  return [...rows.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const QUERIES: UsageQuery[] = [
  { since: T0, until: T0 + 3 * D, groupBy: ["model"], bucket: "none" },
  { since: T0 + 5 * H + 1, until: T0 + 2 * D + 7 * H - 1, groupBy: ["project", "key"], bucket: "day" },
  { since: T0 + 13 * H, until: T0 + D + 2 * H, groupBy: ["provider", "endpoint"], bucket: "hour", includeSandbox: true },
  { since: T0 - D, until: T0 + 4 * D, groupBy: [], bucket: "none", includeSandbox: true },
  { since: T0 + 3 * H, until: T0 + 2 * D + 20 * H, groupBy: ["model", "provider"], bucket: "day", filter: { project: "beta", endpoint: "chat" } },
  { since: T0, until: T0 + 3 * D, groupBy: ["project", "key", "model", "provider", "endpoint"], bucket: "hour", includeSandbox: true },
];

interface Backend {
  open(): Promise<Store>;
  /** Wait until what was recorded is readable (Postgres: the spool written). */
  settle?(s: Store): Promise<void>;
}

const backends: Record<string, Backend> = {
  memory: { open: async () => new MemoryStore() },
  sqlite: { open: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-reader-")), "g.db")) },
  redis: { open: () => RedisStore.connect(redis.url, `rd${++seq}:`) },
  "redis+postgres": {
    open: async () => createStore(
      { kind: "redis", url: redis.url, prefix: `rp${++seq}:`, ledger: { kind: "postgres", url: await postgres.createDatabase(), flush_interval_ms: 20 } },
      tmpdir(), undefined, { spoolDir: mkdtempSync(join(tmpdir(), "mg-reader-spool-")) },
    ),
    settle: (s) => (s as SplitLedgerStore).ledgerStore.flush(),
  },
};

/** A key id names one key per project: key "ci" in two projects (tenant-a 3 requests, tenant-b 2), never sandbox. */
function sameKeyRecords(): LedgerRecord[] {
  return ["tenant-a", "tenant-a", "tenant-a", "tenant-b", "tenant-b"].map((project, i) =>
    record(700 + i, { project, keyId: "ci", sandbox: false, ts: T0 + D + 9 * H + i * 60_000, costPico: BigInt(i + 1) * 1_000_000n, costUsd: picoToUsd(BigInt(i + 1) * 1_000_000n) }));
}

describe.each(Object.keys(backends))("ledger reader: %s", (kind) => {
  const b = backends[kind]!;
  let store: Store;
  const features = featureRecords();
  const sameKey = sameKeyRecords();
  const records = [...Array.from({ length: 600 }, (_, i) => record(i)), ...features, ...sameKey];
  beforeAll(async () => {
    store = await b.open();
    for (let i = 0; i < records.length; i += 50) await Promise.all(records.slice(i, i + 50).map((r) => store.record(r)));
    // Replays of records already there (a spool replay, a retried write) change nothing.
    await Promise.all(records.slice(0, 40).map((r) => store.record(r)));
    await b.settle?.(store);
  }, 60_000);
  afterAll(async () => { await store?.close(); });

  it.each(QUERIES.map((q, i) => [i, q] as const))("usage query %i equals the sums of the raw records", async (_i, q) => {
    const got = await store.usage(q);
    const want = oracle(records, q);
    expect(got.length).toBe(want.length);
    expect(got.length).toBeGreaterThan(0);
    for (let i = 0; i < want.length; i++) {
      expect({ ...got[i], videoSeconds: Math.round(got[i]!.videoSeconds * 1000) }).toEqual({ ...want[i], videoSeconds: Math.round(want[i]!.videoSeconds * 1000) });
    }
  });

  it("search: newest first, every matching record exactly once across pages, filters applied", async () => {
    const want = records.filter((r) => r.project === "acme" && r.status >= 500).map((r) => r.generationId);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.search({ project: "acme", status: "5xx", limit: 7, cursor });
      for (const r of page.records) {
        expect(r.project).toBe("acme");
        expect(r.status).toBeGreaterThanOrEqual(500);
      }
      seen.push(...page.records.map((r) => r.generationId));
      cursor = page.next;
      pages++;
    } while (cursor && pages < 100);
    expect(seen.sort()).toEqual([...want].sort());
    expect(pages).toBeGreaterThan(1);
    if (kind !== "redis") {
      // By time (Redis pages by when records landed, which is the order they were recorded here, not their ts).
      const page = await store.search({ limit: 50 });
      const ts = page.records.map((r) => r.ts);
      expect(ts).toEqual([...ts].sort((a, b) => b - a));
      expect(page.next).toBeDefined();
    }
  });

  it("search by request id and time range; get returns the record with its attempt list", async () => {
    const r = records[123]!;
    const page = await store.search({ requestId: r.requestId, limit: 5 });
    expect(page.records.map((x) => x.generationId)).toEqual([r.generationId]);
    expect(page.next).toBeUndefined();
    const inRange = await store.search({ since: T0 + D, until: T0 + D + H, limit: 500 });
    expect(inRange.records.map((x) => x.generationId).sort()).toEqual(records.filter((x) => x.ts >= T0 + D && x.ts < T0 + D + H).map((x) => x.generationId).sort());
    const got = await store.get(r.generationId);
    expect(got).toMatchObject({ generationId: r.generationId, costPico: r.costPico, costUsd: r.costUsd, status: r.status, ttftMs: r.ttftMs });
    expect(got!.attemptList).toEqual(r.attemptList);
    expect(await store.get("gen_nope")).toBeUndefined();
  });

  it("keeps what MCP tool calls, guardrails and cache hits add to a record: get and search return it unchanged", async () => {
    // Absent web searches (a tool call's record) read back as 0 from the SQL stores; the admin API shows 0 either way.
    const same = (got: LedgerRecord | undefined, want: LedgerRecord) =>
      expect({ ...got, webSearches: got?.webSearches ?? 0 }, want.generationId).toEqual({ ...want, webSearches: want.webSearches ?? 0 });
    for (const r of features) same(await store.get(r.generationId), r);
    const page = await store.search({ project: "omega", limit: 50 });
    expect(page.records).toHaveLength(features.length);
    for (const got of page.records) same(got, features.find((r) => r.generationId === got.generationId)!);
    // Cache hits, tool calls and guardrail refusals are found by their provider and endpoint like any record.
    expect((await store.search({ provider: "cache", limit: 50 })).records.map((r) => [r.generationId, r.cacheHit]))
      .toEqual([features[6]!, features[5]!].map((r) => [r.generationId, true]));
    expect((await store.search({ endpoint: "mcp_tool", limit: 50 })).records.map((r) => [r.toolBytes, r.toolArguments])).toEqual([[2048, features[0]!.toolArguments]]);
    expect((await store.search({ project: "omega", status: "4xx", limit: 50 })).records.map((r) => [r.outcome, r.guardrail])).toEqual([["blocked", "block:no-secrets"]]);
    // A record no such feature touched carries none of their fields.
    const plain = await store.get(records[5]!.generationId);
    for (const f of ["toolBytes", "toolArguments", "guardrail", "cacheHit"] as const) expect(plain?.[f], f).toBeUndefined();
  });

  it("rollups: a guardrail's block is an error (even when the answer had begun: status 200), a cache hit a request like any", async () => {
    const rows = await store.usage({ since: T0, until: T0 + 3 * D, groupBy: ["provider", "endpoint"], bucket: "none", filter: { project: "omega" } });
    const row = (provider: string, endpoint: string) => rows.find((r) => r.group.provider === provider && r.group.endpoint === endpoint);
    expect(row("", "chat")).toMatchObject({ requests: 1, errors: 1, costPico: 0n });
    expect(row("p1", "messages")).toMatchObject({ requests: 1, errors: 1, costPico: features[3]!.costPico, inputTokens: features[3]!.inputTokens });
    expect(row("p2", "chat")).toMatchObject({ requests: 1, errors: 0 });
    expect(row("docs", "mcp_tool")).toMatchObject({ requests: 1, errors: 0, costUsd: "0" });
    expect(row("web", "responses_mcp_tool")).toMatchObject({ requests: 1, errors: 1 });
    // Grouped by provider alone, the cache's hits are one row: their count and what they were billed.
    const byProvider = await store.usage({ since: T0, until: T0 + 3 * D, groupBy: ["provider"], bucket: "none" });
    expect(byProvider.find((r) => r.group.provider === "cache")).toMatchObject({ requests: 2, errors: 0, inputTokens: 0, costPico: 3_500_000n, costUsd: picoToUsd(3_500_000n) });
  });

  it("a key id used in two projects is two rows, each naming its project, grouped or filtered by key", async () => {
    const range = { since: T0, until: T0 + 3 * D, bucket: "none" as const };
    const ci = (rows: UsageRow[]) => rows.filter((r) => r.group.key === "ci").map((r) => [r.group.project, r.group.key, r.requests, r.costPico]);
    expect(ci(await store.usage({ ...range, groupBy: ["key"] }))).toEqual([["tenant-a", "ci", 3, 6_000_000n], ["tenant-b", "ci", 2, 9_000_000n]]);
    const byModel = await store.usage({ ...range, groupBy: ["key", "model"], filter: { key: "ci" } });
    expect(byModel).toEqual(oracle(records, { ...range, groupBy: ["project", "key", "model"], filter: { key: "ci" } }));
    // Filtered by key without a project: one row per project, not both projects' sums as one.
    const filtered = await store.usage({ ...range, groupBy: [], filter: { key: "ci" } });
    expect(filtered.map((r) => [r.group.project, r.requests, r.costPico])).toEqual([["tenant-a", 3, 6_000_000n], ["tenant-b", 2, 9_000_000n]]);
    expect(await store.usage({ ...range, groupBy: [], filter: { key: "ci", project: "tenant-b" } })).toMatchObject([{ group: {}, requests: 2, costPico: 9_000_000n }]);
  });

  it("refuses a query it cannot answer with a 400 naming the field", async () => {
    const bad = async (f: () => Promise<unknown>, field: string) => {
      const err = await f().then(() => undefined, (e) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field } });
    };
    await bad(() => store.usage({ since: T0, until: T0 + D, groupBy: ["colour" as UsageDimension], bucket: "none" }), "groupBy");
    await bad(() => store.usage({ since: T0, until: T0 + D, groupBy: [], bucket: "week" as "day" }), "bucket");
    await bad(() => store.search({ limit: 501 }), "limit");
    await bad(() => store.search({ limit: 5, status: "2x" }), "status");
    await bad(() => store.search({ limit: 5, cursor: "!!" }), "cursor");
  });
});

describe("rollups of ledgers written before rollups existed", () => {
  it("SQLite: an old ledger file gets its rollups (and attempt column) once, when opened", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-old-")), "g.db");
    const old = new SqliteStore(path);
    const records = Array.from({ length: 120 }, (_, i) => record(i, { attemptList: undefined }));
    for (const r of records) await old.record(r);
    await old.close();
    // Make it a file of the previous version: no rollup tables, no attempt_list column, no marker.
    const db = new Database(path);
    db.exec("DROP TABLE ledger_hourly; DROP TABLE ledger_daily; DROP TABLE meta; DROP VIEW ledger_all; DROP TABLE ledger_journal; ALTER TABLE ledger DROP COLUMN attempt_list");
    db.close();
    const store = new SqliteStore(path);
    const q: UsageQuery = { since: T0, until: T0 + 3 * D, groupBy: ["project", "model"], bucket: "day", includeSandbox: true };
    expect(await store.usage(q)).toEqual(oracle(records, q));
    await store.record(record(999, { ts: T0 + H }));
    await store.close();
    const again = new SqliteStore(path); // not counted twice on the next open
    expect(await again.usage(q)).toEqual(oracle([...records, record(999, { ts: T0 + H, generationId: "x" })], q));
    await again.close();
  });

  it("Redis: stream entries an older gateway wrote (no rollups) are counted once, before the first answer", async () => {
    const prefix = `old${++seq}:`;
    const raw = new Redis(redis.url);
    const records = Array.from({ length: 90 }, (_, i) => record(i));
    // The previous version's record: the stream entry alone (its spend counters do not matter here).
    for (const r of records.slice(0, 60)) await raw.xadd(`${prefix}ledger`, "*", "e", JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
    const store = await RedisStore.connect(redis.url, prefix);
    for (const r of records.slice(60, 80)) await store.record(r);
    // An older replica still running writes more between the new one's records.
    for (const r of records.slice(80)) await raw.xadd(`${prefix}ledger`, "*", "e", JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
    const q: UsageQuery = { since: T0, until: T0 + 3 * D, groupBy: ["model"], bucket: "hour", includeSandbox: true };
    expect(await store.usage(q)).toEqual(oracle(records, q));
    expect(await store.usage(q)).toEqual(oracle(records, q)); // the second answer counts nothing again
    raw.disconnect();
    await store.close();
  });
});
