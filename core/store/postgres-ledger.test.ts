// The Postgres ledger on its own, against a real postgresql: month partitions made on demand for any record's time,
// retention dropping whole months of raw records while their rollups keep answering, and a writer that keeps
// records spooled (never lost) while Postgres refuses them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { PostgresLedger } from "./postgres-ledger.ts";
import { picoToUsd } from "../money/money.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres.ts";
import { fillingDisk } from "../../test/helpers/filling-disk.ts";
import { captureLogger } from "../../test/helpers/log-capture.ts";

let postgres: TestPostgres;
beforeAll(async () => { postgres = await startPostgres(); });
afterAll(async () => { await postgres?.stop(); });

const DAY = 86_400_000;
let n = 0;
const rec = (ts: number, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  generationId: `gen_${++n}`, requestId: `req_${n}`, ts, keyId: "k", project: "acme", endpoint: "chat", model: "m", provider: "p", attempts: 1,
  inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0,
  webSearches: 0, costUsd: picoToUsd(5_000_000n), costPico: 5_000_000n, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok", sandbox: false,
  estimated: false, ...over,
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(f: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

const monthName = (t: number) => `mg_ledger_p${new Date(t).getUTCFullYear()}_${String(new Date(t).getUTCMonth() + 1).padStart(2, "0")}`;

async function partitions(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query("SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'mg_ledger' ORDER BY 1");
    return rows.map((r) => r.name);
  } finally {
    await c.end();
  }
}

describe("Postgres ledger", () => {
  it("makes the month partition of any record's time; retention drops old months' records, their usage stays", async () => {
    const url = await postgres.createDatabase();
    const now = Date.now();
    const month = (back: number) => { const d = new Date(now); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 10); };
    const ledger = await PostgresLedger.open({ url, spoolDir: mkdtempSync(join(tmpdir(), "mg-pgl-")), retentionDays: 20, flushIntervalMs: 10 });
    const old = [rec(month(3)), rec(month(3) + DAY), rec(month(2))];
    const fresh = [rec(now - 1000), rec(now - 2000)];
    for (const r of [...old, ...fresh]) await ledger.append(r);
    await ledger.flush();
    const names = await partitions(url);
    for (const t of [month(3), month(2), now]) expect(names).toContain(monthName(t));
    expect((await ledger.search({ limit: 10 })).records).toHaveLength(5);

    await ledger.maintain();
    // Months that ended more than 20 days ago (two and three months back, whatever today is) are gone, with their records; the current month stays.
    const after = await partitions(url);
    expect(after.length).toBeLessThan(names.length);
    expect((await ledger.search({ limit: 10 })).records.map((r) => r.generationId).sort()).toEqual(fresh.map((r) => r.generationId).sort());
    expect(await ledger.get(old[0]!.generationId)).toBeUndefined();
    // The rollups keep what the dropped records added up to.
    const usage = await ledger.usage({ since: month(3) - DAY * 10, until: now + 3_600_000, groupBy: [], bucket: "none" });
    expect(usage[0]).toMatchObject({ requests: 5, inputTokens: 50, costPico: 25_000_000n });
    await ledger.close();
  });

  it("tables from before tool calls, guardrails and cache hits were recorded gain their columns; old rows read as none", async () => {
    const url = await postgres.createDatabase();
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-pgl-"));
    const now = Date.now();
    const old = [rec(now - 2000), rec(now - 1000)];
    const first = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 10 });
    for (const r of old) await first.append(r);
    await first.flush();
    await first.close();
    // The tables as the previous release left them: no such columns on the parent or its partitions.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("ALTER TABLE mg_ledger DROP COLUMN tool_bytes, DROP COLUMN tool_arguments, DROP COLUMN guardrail, DROP COLUMN cache_hit");

    const ledger = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 10 });
    // This month's partition (made by the old release) and one made after the upgrade (a year ahead).
    const later = Date.UTC(new Date(now).getUTCFullYear() + 1, 0, 15);
    const fresh = [
      rec(now, { endpoint: "mcp_tool", model: "search", provider: "docs", toolBytes: 512, toolArguments: "{\"q\":\"x\"}" }),
      rec(now, { outcome: "blocked", status: 400, provider: "", guardrail: "block:no-secrets" }),
      rec(later, { provider: "cache", cacheHit: true }),
    ];
    for (const r of fresh) await ledger.append(r);
    await ledger.flush();
    expect(ledger.status()).toMatchObject({ up: true, pending: 0 });
    for (const r of old) {
      const got = await ledger.get(r.generationId);
      expect(got).toEqual(r);
      expect(got).not.toHaveProperty("cacheHit");
    }
    for (const r of fresh) expect(await ledger.get(r.generationId)).toEqual(r);
    const { rows } = await admin.query("SELECT table_name, count(*)::int AS n FROM information_schema.columns WHERE column_name IN ('tool_bytes', 'tool_arguments', 'guardrail', 'cache_hit') GROUP BY 1 ORDER BY 1");
    expect(rows.map((r) => r.n)).toEqual(rows.map(() => 4));
    expect(rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["mg_ledger", monthName(now), monthName(later)]));
    await admin.end();
    await ledger.close();
  });

  it("while Postgres refuses writes, records stay spooled and nothing fails; written once when it takes them again", async () => {
    const url = await postgres.createDatabase();
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-pgl-"));
    const ledger = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 10 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // A rollup table gone (as good as a server that refuses): every batch fails, the raw insert rolls back with it.
    await admin.query("ALTER TABLE mg_ledger_daily RENAME TO mg_away");
    const records = Array.from({ length: 30 }, (_, i) => rec(Date.now() - i * 1000));
    for (const r of records) await ledger.append(r);
    // Until the failed batch has gone to the spool: a fixed 300 ms was too short for a loaded machine (seen: all 30
    // still in memory).
    await until(async () => !ledger.status().up && (ledger as any).spool.inMemory.records === 0, 10_000);
    expect(ledger.status()).toMatchObject({ up: false, pending: 30 });
    // They wait on disk only: a long outage costs disk, not memory.
    expect((ledger as any).spool.inMemory).toEqual({ records: 0, bytes: 0 });
    expect(readdirSync(spoolDir).filter((f) => f.startsWith("pg-ledger.")).length).toBeGreaterThan(0);
    expect(ledger.status().error).toMatch(/mg_ledger_daily/);
    expect((await admin.query("SELECT count(*)::int AS n FROM mg_ledger")).rows[0].n).toBe(0);
    await ledger.close();
    // A new process on the same spool directory writes them (each once), even with a replay of some already there.
    await admin.query("ALTER TABLE mg_away RENAME TO mg_ledger_daily");
    const next = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 10 });
    expect(next.pending).toBe(30);
    await next.flush();
    for (const r of records.slice(0, 5)) await next.append(r);
    await next.flush();
    expect(next.status()).toMatchObject({ up: true, pending: 0 });
    expect((await admin.query("SELECT count(*)::int AS n FROM mg_ledger")).rows[0].n).toBe(30);
    expect((await admin.query("SELECT sum(requests)::int AS n FROM mg_ledger_hourly")).rows[0].n).toBe(30);
    await admin.end();
    await next.close();
  });

  it("the spool of a replica that dies after this one started is counted and written with nothing spooled here", async () => {
    const url = await postgres.createDatabase();
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-pgl-"));
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const gone = new Promise((r) => other.once("exit", r));
    const records = Array.from({ length: 3 }, () => rec(Date.now()));
    writeFileSync(join(spoolDir, `pg-ledger.${other.pid}.jsonl`),
      records.map((r) => JSON.stringify({ k: r.generationId, t: r.ts, v: { ...r, costPico: r.costPico.toString() } }) + "\n").join(""));
    const ledger = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 10 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await sleep(100);
      expect(ledger.pending).toBe(0); // the other replica's, while it runs
      // It dies while Postgres refuses writes: this replica, with no request of its own, shows its records pending...
      await admin.query("ALTER TABLE mg_ledger_daily RENAME TO mg_away");
      other.kill("SIGKILL");
      await gone;
      // (Counted as soon as adopted; down once the write Postgres refuses has been tried: wait for both.)
      await until(async () => ledger.status().pending === 3 && !ledger.status().up);
      expect(ledger.status()).toMatchObject({ up: false, pending: 3 });
      // ...and writes them once Postgres takes them.
      await admin.query("ALTER TABLE mg_away RENAME TO mg_ledger_daily");
      await until(async () => (await admin.query("SELECT count(*)::int AS n FROM mg_ledger")).rows[0].n === 3);
      await until(async () => ledger.status().pending === 0);
    } finally {
      other.kill("SIGKILL");
      await admin.end();
      await ledger.close();
    }
  });

  it("a spool disk that fills up part way through a write: every record still reaches Postgres, none is said to be on disk that is not", async () => {
    const url = await postgres.createDatabase();
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-pgl-"));
    const records = Array.from({ length: 4 }, () => rec(Date.now()));
    const line = (r: LedgerRecord) => Buffer.byteLength(JSON.stringify({ k: r.generationId, t: Date.now(), v: { ...r, costPico: r.costPico.toString() } }) + "\n");
    // Room for one and a half records' lines: the write of the first three is cut short in the second, and the disk
    // stays that full (the fourth, written after the three held ones, does not fit either).
    const disk = fillingDisk(line(records[0]!) * 1.5);
    const ledger = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 60_000, spool: { openSegment: (p) => disk.open(p) } });
    try {
      expect(await Promise.all(records.slice(0, 3).map((r) => ledger.append(r)))).toEqual(["memory", "memory", "memory"]);
      expect(await ledger.append(records[3]!)).toBe("memory");
      await ledger.flush();
      expect(ledger.status()).toMatchObject({ up: true, pending: 0 });
      expect((await ledger.search({ limit: 10 })).records.map((r) => r.generationId).sort()).toEqual(records.map((r) => r.generationId).sort());
    } finally {
      await ledger.close();
    }
  });

  it("records neither Postgres nor the spool's full disk took are named at shutdown, not dropped unsaid", async () => {
    const url = await postgres.createDatabase();
    const { logger, log } = captureLogger("info");
    const disk = fillingDisk(0);
    const ledger = await PostgresLedger.open({ url, spoolDir: mkdtempSync(join(tmpdir(), "mg-pgl-")), flushIntervalMs: 10, log: logger, spool: { openSegment: (p) => disk.open(p) } });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("ALTER TABLE mg_ledger_daily RENAME TO mg_away"); // Postgres refuses every batch
    const r = rec(Date.now());
    expect(await ledger.append(r)).toBe("memory");
    await until(async () => !ledger.status().up);
    await ledger.close();
    await admin.end();
    const said = log.records().find((l) => /lost at shutdown/.test(l.msg));
    expect(said).toMatchObject({ level: 50, records: 1, generationIds: [r.generationId] });
  });

  it("a record Postgres refuses for its data is set aside (on disk, with the error); the rest of its batch is written", async () => {
    const url = await postgres.createDatabase();
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-pgl-"));
    const ledger = await PostgresLedger.open({ url, spoolDir, flushIntervalMs: 1000 });
    const good = Array.from({ length: 9 }, () => rec(Date.now()));
    const bad = rec(Date.now(), { project: "nul\u0000byte" }); // text columns refuse NUL
    for (const r of [...good.slice(0, 4), bad, ...good.slice(4)]) await ledger.append(r);
    await ledger.flush();
    expect(ledger.status()).toMatchObject({ up: true, pending: 0 });
    expect((await ledger.search({ limit: 20 })).records.map((r) => r.generationId).sort()).toEqual(good.map((r) => r.generationId).sort());
    const rejected = readFileSync(join(spoolDir, "rejected-ledger.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rejected).toHaveLength(1);
    expect(rejected[0].record.generationId).toBe(bad.generationId);
    expect(rejected[0].error).toMatch(/0x00|byte/);
    await ledger.close();
  });

  it("starts while Postgres is down (records wait, tables made once it answers); refuses a wrong database at once", async () => {
    const url = await postgres.createDatabase();
    await expect(PostgresLedger.open({ url: url.replace(/\/[^/]+$/, "/no_such_db"), spoolDir: mkdtempSync(join(tmpdir(), "mg-pgl-")) }))
      .rejects.toThrow(/cannot use the Postgres ledger at postgres:\/\/\*\*\*@127\.0\.0\.1:\d+\/no_such_db: .*no_such_db/);
    await postgres.kill();
    let ledger: PostgresLedger | undefined;
    try {
      ledger = await PostgresLedger.open({ url, spoolDir: mkdtempSync(join(tmpdir(), "mg-pgl-")), flushIntervalMs: 10 });
      for (let i = 0; i < 5; i++) await ledger.append(rec(Date.now()));
      expect(ledger.status()).toMatchObject({ up: false, pending: 5 });
    } finally {
      await postgres.restart();
    }
    await ledger!.flush(20_000);
    expect(ledger!.status()).toMatchObject({ up: true, pending: 0 });
    expect((await ledger!.search({ limit: 10 })).records).toHaveLength(5);
    await ledger!.close();
  });
});
