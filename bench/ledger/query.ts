// A month's spend by model over 10 million ledger records, answered from the rollups (issue 28):
//   npx tsx bench/ledger/query.ts [records=10000000] [--no-sqlite]
// Loads N records spread over one month (50 projects × 4 keys, 12 models on 3 providers, three endpoints, 2 %
// errors) straight into a real, durable postgresql (and a SQLite file), builds the rollups from them the way the
// stores do (Postgres: the writer's sums; SQLite: the one-time backfill an old ledger file gets when opened), then
// times the reader's usage() — the same call the admin API and `model-gateway usage` make — against the obvious
// scan of the raw records for the same answer.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import Database from "better-sqlite3";
import { PostgresLedger } from "../../core/store/postgres-ledger.ts";
import { ensurePartitions, monthOf } from "../../core/store/postgres-schema.ts";
import { ROLLUP_COUNTERS, ROLLUP_KEY } from "../../core/store/ledger-sql.ts";
import { SqliteStore } from "../../core/store/sqlite.ts";
import type { LedgerReader, UsageQuery } from "../../core/contracts/ledger-reader.ts";
import { startPostgres } from "../../test/helpers/postgres.ts";

const N = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10_000_000);
const withSqlite = !process.argv.includes("--no-sqlite");
const month = monthOf(Date.UTC(2026, 9, 15)); // October 2026
const SPAN = month.end - month.start;

/** Record i's columns as SQL over generate_series (the same expressions in both databases). */
const columns = (i: string) => ({
  generation_id: `'gen_' || ${i}`, request_id: `'req_' || ${i}`, ts: `${month.start} + (${i} * ${SPAN} / ${N})`,
  key_id: `'k' || (${i} % 4)`, project: `'proj' || ((${i} / 4) % 50)`,
  endpoint: `CASE WHEN ${i} % 25 = 0 THEN 'embeddings' WHEN ${i} % 10 = 0 THEN 'messages' ELSE 'chat' END`,
  model: `'model-' || (${i} % 12)`, provider: `'prov-' || (${i} % 3)`, attempts: "1", input_tokens: `100 + ${i} % 900`,
  output_tokens: `50 + ${i} % 400`, cache_read_tokens: `${i} % 7`, cache_write_tokens: "0", reasoning_tokens: "0", images: "0", video_seconds: "0",
  search_units: "0", web_searches: "0", cost_usd: "'0.000123'", cost_pico: `123000000 + (${i} % 1000) * 1000`, latency_ms: "300", ttft_ms: "80",
  status: `CASE WHEN ${i} % 50 = 0 THEN 502 ELSE 200 END`, outcome: `CASE WHEN ${i} % 50 = 0 THEN 'error' ELSE 'ok' END`,
});

const rollupFromRaw = (table: string, bucketMs: number, raw: string) => `INSERT INTO ${table} (${[...ROLLUP_KEY, ...ROLLUP_COUNTERS].join(", ")})
  SELECT (ts / ${bucketMs}) * ${bucketMs}, project, key_id, model, provider, endpoint, sandbox, count(*),
    sum(CASE WHEN status >= 400 OR outcome <> 'ok' THEN 1 ELSE 0 END), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
    sum(cache_write_tokens), sum(reasoning_tokens), sum(images), sum(video_seconds), sum(search_units), sum(web_searches), sum(cost_pico)
  FROM ${raw} GROUP BY 1, 2, 3, 4, 5, 6, 7`;

const QUERIES: [string, UsageQuery][] = [
  ["month, spend by model", { since: month.start, until: month.end, groupBy: ["model"], bucket: "none" }],
  ["month, by project and model", { since: month.start, until: month.end, groupBy: ["project", "model"], bucket: "none" }],
  ["month, by model per day", { since: month.start, until: month.end, groupBy: ["model"], bucket: "day" }],
  ["Oct 3 09:00 - Oct 20 17:00, by key", { since: month.start + 2 * 86_400_000 + 9 * 3_600_000, until: month.start + 19 * 86_400_000 + 17 * 3_600_000, groupBy: ["project", "key"], bucket: "none" }],
];

async function time<T>(f: () => Promise<T>, runs: number): Promise<{ first: number; p50: number; max: number; value: T }> {
  const ms: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    value = await f();
    ms.push(performance.now() - t);
  }
  const rest = ms.slice(1).sort((a, b) => a - b);
  return { first: ms[0]!, p50: rest[Math.floor(rest.length / 2)] ?? ms[0]!, max: Math.max(...rest, ms[0]!), value };
}

async function report(name: string, reader: LedgerReader, rawScan: () => Promise<unknown>): Promise<void> {
  for (const [label, q] of QUERIES) {
    const t = await time(() => reader.usage(q), 11);
    console.log(`${name.padEnd(9)} ${label.padEnd(36)} rollups: first ${t.first.toFixed(1)} ms, p50 ${t.p50.toFixed(1)} ms, max ${t.max.toFixed(1)} ms (${t.value.length} rows)`);
  }
  const scan = await time(rawScan, 2);
  console.log(`${name.padEnd(9)} ${"month, spend by model".padEnd(36)} raw scan: first ${scan.first.toFixed(0)} ms, then ${scan.p50.toFixed(0)} ms`);
}

const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const postgres = await startPostgres({ durable: true });
const dir = mkdtempSync(join(tmpdir(), "mg-ledger-query-"));
try {
  const url = await postgres.createDatabase("ledger");
  const ledger = await PostgresLedger.open({ url, queryTimeoutMs: 600_000 });
  const db = new pg.Pool({ connectionString: url, max: 2 });
  await ensurePartitions(db, [month]);
  let t = performance.now();
  const cols = columns("i");
  const CHUNK = 1_000_000;
  for (let from = 0; from < N; from += CHUNK) {
    await db.query(`INSERT INTO mg_ledger (${Object.keys(cols).join(", ")}, sandbox, estimated)
      SELECT ${Object.values(cols).join(", ")}, false, false FROM generate_series(${from}::bigint, ${Math.min(N, from + CHUNK) - 1}::bigint) AS i`);
    log(`postgres: ${Math.min(N, from + CHUNK)} records`);
  }
  log(`postgres: ${N} records loaded in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  t = performance.now();
  await db.query(rollupFromRaw("mg_ledger_hourly", 3_600_000, "mg_ledger"));
  await db.query(rollupFromRaw("mg_ledger_daily", 86_400_000, "mg_ledger"));
  await db.query("ANALYZE");
  const sizes = (await db.query(`SELECT (SELECT count(*) FROM mg_ledger_hourly) AS hourly, (SELECT count(*) FROM mg_ledger_daily) AS daily,
    pg_size_pretty(pg_total_relation_size('${month.name}')) AS raw`)).rows[0];
  log(`postgres: rollups built in ${((performance.now() - t) / 1000).toFixed(0)} s: ${sizes.hourly} hourly rows, ${sizes.daily} daily rows (raw partition ${sizes.raw})`);
  await report("postgres", ledger, () => db.query(`SELECT model, sum(cost_pico) FROM mg_ledger WHERE ts >= ${month.start} AND ts < ${month.end} GROUP BY model`));
  await db.end();
  await ledger.close();

  if (withSqlite) {
    const path = join(dir, "g.db");
    new SqliteStore(path).close(); // the schema
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    raw.exec("DROP TABLE ledger_hourly; DROP TABLE ledger_daily; DELETE FROM meta");
    t = performance.now();
    const s = columns("i");
    for (let from = 0; from < N; from += CHUNK) {
      raw.exec(`WITH RECURSIVE g(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM g WHERE i < ${Math.min(N, from + CHUNK) - 1})
        INSERT INTO ledger (${Object.keys(s).join(", ")}, sandbox, estimated) SELECT ${Object.values(s).join(", ")}, 0, 0 FROM g`);
      log(`sqlite: ${Math.min(N, from + CHUNK)} records`);
    }
    raw.close();
    log(`sqlite: ${N} records loaded in ${((performance.now() - t) / 1000).toFixed(0)} s (${(statSync(path).size / 1e9).toFixed(1)} GB)`);
    t = performance.now();
    const store = new SqliteStore(path); // an old file: its rollups are built once, now
    log(`sqlite: rollups backfilled on open in ${((performance.now() - t) / 1000).toFixed(0)} s`);
    const scanDb = new Database(path, { readonly: true });
    await report("sqlite", store, async () => scanDb.prepare(`SELECT model, sum(cost_pico) FROM ledger WHERE ts >= ? AND ts < ? GROUP BY model`).all(month.start, month.end));
    scanDb.close();
    await store.close();
  }
} finally {
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}
