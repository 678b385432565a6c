// The usage ledger on PostgreSQL (store.ledger: postgres), for several replicas. A response never waits on
// Postgres: its record is appended to this replica's durable spool (fsync'd, spool.ts) and a writer sends the spool
// in batches — one statement per batch inserts the raw records (ON CONFLICT DO NOTHING: exactly once per generation
// id) and adds only the rows it inserted to the hourly and daily rollups, atomically. While Postgres is down the
// records wait in the spool (gateway_ledger_postgres_up 0, pending records and their age rise), on disk only (a long
// outage costs disk, not memory: spool.ts), and are written when it answers; a replica that dies leaves its spool to
// the next process on the same spool_dir.
import pg from "pg";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Logger } from "../log.ts";
import { Spool, type Kept, type SpoolOptions } from "./spool.ts";
import { postgresSpoolTag } from "./spool-tag.ts";
import { IMPORT_LOCK, createSchema, dropPartitionsBefore, ensurePartitions, monthOf, readMeta, writeMeta } from "./postgres-schema.ts";
import { StoreSchemaError } from "./schema-version.ts";
import { POSTGRES, ROLLUP_COUNTERS, ROLLUP_KEY, scanRow, scanSql, searchSql } from "./ledger-sql.ts";
import { DAY_MS, HOUR_MS, UsageAccumulator, planUsage } from "./rollup.ts";
import { pageOf, planSearch } from "./ledger-search.ts";
import { allPeriods, periodBounds } from "./periods.ts";
import { keyScope } from "./key-budget.ts";
import { storeUnavailable } from "./unavailable.ts";
import { GatewayError } from "../errors.ts";
import type { LedgerEntry, LedgerQuery } from "./types.ts";
import type { LedgerReader, LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";

export interface PostgresLedgerOptions {
  url: string;
  /** Where records wait for Postgres; absent: read only (the `usage` command), no writer. */
  spoolDir?: string;
  log?: Logger;
  retentionDays?: number;
  batchSize?: number;
  flushIntervalMs?: number;
  poolSize?: number;
  /** Bound on every statement (statement_timeout and the client's own wait). */
  queryTimeoutMs?: number;
  /** The spool's own options (a test's disk that fills up). */
  spool?: SpoolOptions;
}

/** A record as it waits in the spool (money as a decimal string). */
type Spooled = Omit<LedgerRecord, "costPico"> & { costPico: string };

/** Raw columns in the order the batch insert's arrays carry them, with their array types. */
const RAW: [string, string][] = [
  ["generation_id", "text"], ["request_id", "text"], ["ts", "bigint"], ["key_id", "text"], ["project", "text"], ["endpoint", "text"],
  ["model", "text"], ["provider", "text"], ["attempts", "integer"], ["input_tokens", "bigint"], ["output_tokens", "bigint"],
  ["cache_read_tokens", "bigint"], ["cache_write_tokens", "bigint"], ["reasoning_tokens", "bigint"], ["images", "bigint"],
  ["video_seconds", "double precision"], ["search_units", "bigint"], ["web_searches", "bigint"], ["cost_usd", "numeric"], ["cost_pico", "bigint"],
  ["latency_ms", "double precision"], ["ttft_ms", "double precision"], ["status", "integer"], ["outcome", "text"], ["sandbox", "boolean"],
  ["estimated", "boolean"], ["attempt_list", "jsonb"], ["tool_bytes", "bigint"], ["tool_arguments", "text"], ["guardrail", "text"], ["cache_hit", "boolean"],
  ["charged_at", "bigint"],
];

/**
 * A record's values for the batch. Numbers the database would refuse (NaN, Infinity, a fraction in a count) are
 * made valid here: one bad value must never hold every record behind it in the spool.
 */
function columnsOf(e: Spooled): unknown[] {
  const int = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? Math.round(v) : 0);
  const real = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return [
    e.generationId, e.requestId, int(e.ts), e.keyId, e.project, e.endpoint, e.model, e.provider, int(e.attempts), int(e.inputTokens), int(e.outputTokens),
    int(e.cacheReadTokens), int(e.cacheWriteTokens), int(e.reasoningTokens), int(e.images), real(e.videoSeconds), int(e.searchUnits),
    int(e.webSearches), /^\d+(\.\d+)?$/.test(e.costUsd) ? e.costUsd : "0", /^\d+$/.test(e.costPico) ? e.costPico : "0",
    real(e.latencyMs), e.ttftMs === null || !Number.isFinite(e.ttftMs) ? null : e.ttftMs, int(e.status), e.outcome, e.sandbox === true, e.estimated === true,
    e.attemptList ? JSON.stringify(e.attemptList) : null,
    typeof e.toolBytes === "number" && Number.isFinite(e.toolBytes) ? Math.round(e.toolBytes) : null, typeof e.toolArguments === "string" ? e.toolArguments : null,
    e.guardrail || null, e.cacheHit === true, typeof e.chargedAt === "number" && Number.isFinite(e.chargedAt) ? Math.round(e.chargedAt) : null,
  ];
}

const ROLLUP_SUMS = `count(*), count(*) FILTER (WHERE status >= 400 OR outcome <> 'ok'), sum(input_tokens), sum(output_tokens),
  sum(cache_read_tokens), sum(cache_write_tokens), sum(reasoning_tokens), sum(images), sum(video_seconds), sum(search_units), sum(web_searches), sum(cost_pico)`;

const rollupInsert = (table: string, bucketMs: number) => `INSERT INTO ${table} AS r (${[...ROLLUP_KEY, ...ROLLUP_COUNTERS].join(", ")})
  SELECT (ts / ${bucketMs}) * ${bucketMs}, project, key_id, model, provider, endpoint, sandbox, ${ROLLUP_SUMS}
  FROM ins GROUP BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (${ROLLUP_KEY.join(", ")}) DO UPDATE SET ${ROLLUP_COUNTERS.map((c) => `${c} = r.${c} + EXCLUDED.${c}`).join(", ")}`;

/** One batch, one statement: the raw rows that are new, and their sums into both rollups. */
const WRITE_BATCH = `WITH input AS (
  SELECT * FROM unnest(${RAW.map(([, t], i) => `$${i + 1}::${t}[]`).join(", ")}) AS t(${RAW.map(([c]) => c).join(", ")})
), ins AS (
  INSERT INTO mg_ledger (${RAW.map(([c]) => c).join(", ")}) SELECT * FROM input ON CONFLICT DO NOTHING
  RETURNING ts, project, key_id, model, provider, endpoint, sandbox, status, outcome, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, web_searches, cost_pico
), hourly AS (${rollupInsert("mg_ledger_hourly", HOUR_MS)} RETURNING 1
), daily AS (${rollupInsert("mg_ledger_daily", DAY_MS)} RETURNING 1
) SELECT count(*)::int AS inserted FROM ins`;

const MAINTENANCE_MS = 3_600_000;

export class PostgresLedger implements LedgerReader {
  private readonly pool: pg.Pool;
  private readonly connection: pg.ClientConfig;
  private readonly spool: Spool<Spooled> | ReadOnlySpool;
  private readonly batchSize: number;
  private readonly flushMs: number;
  private readonly retentionDays: number;
  private readonly partitions = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private maintenance: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private failures = 0;
  private closed = false;
  /** Postgres took the last batch (or nothing has failed yet). */
  up = true;
  private downSince = 0;
  private lastError = "";
  private metrics?: { written: Counter; failures: Counter; rejected: Counter; batch: Histogram };

  private constructor(private readonly o: PostgresLedgerOptions, spool: Spool<Spooled> | ReadOnlySpool) {
    this.spool = spool;
    this.batchSize = o.batchSize ?? 500;
    this.flushMs = o.flushIntervalMs ?? 200;
    this.retentionDays = o.retentionDays ?? 400;
    const timeout = o.queryTimeoutMs ?? 10_000;
    this.connection = {
      connectionString: o.url, connectionTimeoutMillis: Math.min(timeout, 5_000),
      statement_timeout: timeout, query_timeout: timeout + 1_000, application_name: "model-gateway",
    };
    this.pool = new pg.Pool({ ...this.connection, max: o.poolSize ?? 4, idleTimeoutMillis: 30_000 });
    // An idle connection that breaks (a restarted server) must not take the process down; the next query reconnects.
    this.pool.on("error", (err) => this.o.log?.warn("ledger: a Postgres connection failed", { error: err.message }));
  }

  /** Connect, make the tables and this month's and next month's partitions, then start writing what the spool holds. */
  static async open(o: PostgresLedgerOptions): Promise<PostgresLedger> {
    // Named for this database: another gateway's Postgres ledger may spool in the same spool_dir.
    const store = postgresSpoolTag(o.url);
    const spool = o.spoolDir ? await Spool.open<Spooled>(o.spoolDir, "pg-ledger", o.log, store, o.spool) : new ReadOnlySpool();
    const l = new PostgresLedger(o, spool);
    try {
      await l.prepare();
    } catch (err) {
      // A wrong password, database or grant is the config's fault: refuse to start. A server that does not answer
      // is an outage like any other: serve, spool, and prepare the tables once it answers.
      if (!o.spoolDir || isConfigError(err)) {
        await l.pool.end().catch(() => {});
        await spool.close();
        throw new Error(`store: cannot use the Postgres ledger at ${redactUrl(o.url)}: ${(err as Error).message}`);
      }
      l.up = false;
      l.downSince = Date.now();
      l.lastError = (err as Error).message;
      o.log?.error("ledger: Postgres does not answer at start; records wait in the spool until it does", { url: redactUrl(o.url), error: l.lastError });
    }
    if (o.spoolDir) l.maintenance = setInterval(() => void l.maintain().catch((err) => l.o.log?.warn("ledger: partition maintenance failed", { error: String(err) })), MAINTENANCE_MS).unref();
    if (o.spoolDir) l.schedule(0);
    return l;
  }

  /** Tables made (once per process), then, for a writer, this month's partitions and the retention. */
  private async prepare(): Promise<void> {
    if (!this.schemaReady) {
      await createSchema(this.pool);
      this.schemaReady = true;
    }
    // Partitions and retention are the writers' business; a read-only opener (the CLI) changes nothing.
    if (this.o.spoolDir) await this.maintain();
  }
  private schemaReady = false;

  /** Partitions for now and next month; the ones past retention dropped (at open, then hourly). */
  async maintain(): Promise<void> {
    const now = Date.now();
    const months = [monthOf(now), monthOf(monthOf(now).end)];
    await ensurePartitions(this.pool, months);
    for (const m of months) this.partitions.add(m.name);
    const dropped = await dropPartitionsBefore(this.pool, now - this.retentionDays * DAY_MS);
    for (const name of dropped) this.partitions.delete(name);
    if (dropped.length) this.o.log?.info("ledger: dropped partitions past the retention", { partitions: dropped, retentionDays: this.retentionDays });
  }

  registerMetrics(registry: Registry): void {
    const registers = [registry];
    const self = this;
    new Gauge({ name: "gateway_ledger_postgres_up", help: "1 while Postgres takes the ledger's batches, 0 while they wait in the spool.", registers, aggregator: "min", collect() { this.set(self.up ? 1 : 0); } });
    new Gauge({ name: "gateway_ledger_postgres_pending_records", help: "Ledger records spooled on this replica, not yet in Postgres.", registers, collect() { this.set(self.pending); } });
    new Gauge({
      name: "gateway_ledger_postgres_oldest_pending_seconds", help: "Age of the oldest record not yet in Postgres (0 when none waits).", registers, aggregator: "max",
      collect() {
        const at = self.oldestAt;
        this.set(at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
      },
    });
    this.metrics = {
      written: new Counter({ name: "gateway_ledger_postgres_written_total", help: "Ledger records written into Postgres (new ones; replays already there are not counted).", registers }),
      failures: new Counter({ name: "gateway_ledger_postgres_write_failures_total", help: "Batches Postgres did not take (they stay spooled and are retried).", registers }),
      rejected: new Counter({ name: "gateway_ledger_postgres_rejected_total", help: "Records Postgres refused for their data, set aside in rejected-ledger.jsonl in the spool directory.", registers }),
      batch: new Histogram({ name: "gateway_ledger_postgres_batch_seconds", help: "Time to write one batch of ledger records into Postgres.", buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers }),
    };
  }

  /** Keep a record until it is in Postgres; resolves once it is on this machine's disk (or only in memory: see Kept). */
  async append(entry: LedgerRecord): Promise<Kept> {
    const kept = await this.spool.append(entry.generationId, { ...entry, costPico: entry.costPico.toString() });
    if (this.spool.size >= this.batchSize && this.up) this.schedule(0);
    return kept;
  }

  /** Records on this replica not yet in Postgres (in the spool). */
  get pending(): number {
    return this.spool.size;
  }

  private get oldestAt(): number | undefined {
    return this.spool.oldestAt;
  }

  status(): { up: boolean; pending: number; oldest_age_seconds: number; since?: string; error?: string } {
    const at = this.oldestAt;
    return {
      up: this.up, pending: this.pending, oldest_age_seconds: at === undefined ? 0 : Math.round((Date.now() - at) / 100) / 10,
      ...(this.up ? {} : { since: new Date(this.downSince).toISOString(), error: this.lastError }),
    };
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.write().finally(() => {
        // While down, back off (up to 5 s); while up, the next flush interval.
        this.schedule(this.up ? this.flushMs : Math.min(this.flushMs * 2 ** Math.min(this.failures, 5), 5_000));
      });
    }, ms);
    this.timer.unref();
  }

  /** Send what the spool holds, batch after batch; one writer at a time (a second call joins the running one). */
  private write(): Promise<void> {
    if (this.writing) return this.writing;
    const run = this.writeAll().finally(() => {
      if (this.writing === run) this.writing = undefined;
    });
    return (this.writing = run);
  }

  private async writeAll(): Promise<void> {
    try {
      // Spools of processes that died since (or were zombies at) our start: ours to write and to count as pending,
      // even while our own spool is empty or Postgres is down.
      await this.spool.adoptGone();
      if (!this.schemaReady) await this.prepare();
      if (this.spool.size) await this.spool.drain(async (batch) => { await this.writeBatch(batch); }, this.batchSize);
      if (!this.up) {
        this.o.log?.info("ledger: Postgres takes records again; the spool is written", { downMs: Date.now() - this.downSince });
        this.up = true;
        this.downSince = 0;
      }
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.metrics?.failures.inc();
      this.lastError = (err as Error).message;
      if (this.up) {
        this.up = false;
        this.downSince = Date.now();
        this.o.log?.error("ledger: Postgres does not take records; they wait in the spool and no request fails for it", { error: this.lastError, pending: this.spool.size });
      }
    }
  }

  /**
   * One batch; a batch Postgres refuses for its data (SQLSTATE class 22 or 23, not an outage) is split until the
   * record it refuses is found, and that one is set aside in `rejected-ledger.jsonl` beside the spool (fsync'd, with
   * the error) so the records behind it keep flowing — never dropped silently.
   */
  private async writeBatch(batch: Spooled[]): Promise<number> {
    try {
      return await this.insertBatch(batch);
    } catch (err) {
      if (!isDataError(err)) throw err;
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        return (await this.writeBatch(batch.slice(0, half))) + (await this.writeBatch(batch.slice(half)));
      }
      await this.reject(batch[0]!, err as Error);
      return 0;
    }
  }

  private async reject(record: Spooled, err: Error): Promise<void> {
    const file = join(this.o.spoolDir!, "rejected-ledger.jsonl");
    const fh = await open(file, "a");
    try {
      await fh.write(JSON.stringify({ at: new Date().toISOString(), error: err.message, record }) + "\n");
      await fh.datasync();
    } finally {
      await fh.close();
    }
    this.metrics?.rejected.inc();
    this.o.log?.error("ledger: Postgres refuses a record's data; it is set aside, the others go on", { generationId: record.generationId, file, error: err.message });
  }

  private async insertBatch(batch: Spooled[]): Promise<number> {
    const missing = new Map<string, ReturnType<typeof monthOf>>();
    for (const e of batch) {
      const m = monthOf(e.ts);
      if (!this.partitions.has(m.name)) missing.set(m.name, m);
    }
    if (missing.size) {
      await ensurePartitions(this.pool, [...missing.values()]);
      for (const name of missing.keys()) this.partitions.add(name);
    }
    const columns: unknown[][] = RAW.map(() => []);
    for (const e of batch) columnsOf(e).forEach((v, i) => columns[i]!.push(v));
    const t0 = performance.now();
    const { rows } = await this.pool.query<{ inserted: number }>(WRITE_BATCH, columns);
    this.metrics?.batch.observe((performance.now() - t0) / 1000);
    this.metrics?.written.inc(rows[0]?.inserted ?? 0);
    return rows[0]?.inserted ?? 0;
  }

  /**
   * Records from elsewhere (the Redis ledger stream of an installation that moved its ledger here), written like a
   * spooled batch: only the new ones go in and into the rollups, so an import run twice counts each once.
   */
  async importRecords(records: LedgerRecord[]): Promise<number> {
    if (!this.schemaReady) await this.prepare();
    return this.writeBatch(records.map((e) => ({ ...e, costPico: String(e.costPico) })));
  }

  /** The tables made (and the Redis stream import's eligibility decided, postgres-schema.ts): throws while Postgres is down. */
  async ready(): Promise<void> {
    if (!this.schemaReady) await this.prepare();
  }

  /**
   * `f` run by the one process holding the import lock (a session advisory lock, dropped with its connection if the
   * process dies); undefined at once when another one holds it.
   */
  async withImportLock<T>(f: () => Promise<T>): Promise<T | undefined> {
    // The lock's connection is its own, outside the pool: f writes through the pool, which with pool_size 1 has no
    // second connection to give while one of its own sits holding the lock (the import then never ran), and flushes
    // and usage queries keep their connections while the import goes on.
    const c = new pg.Client(this.connection);
    c.on("error", (err) => this.o.log?.warn("ledger: the Redis import's lock connection to Postgres failed", { error: err.message }));
    try {
      await c.connect();
      const { rows } = await c.query<{ got: boolean }>("SELECT pg_try_advisory_lock($1) AS got", [IMPORT_LOCK]);
      return rows[0]?.got === true ? await f() : undefined;
    } finally {
      // Ending the session lets go of the lock (as a process that dies does).
      await c.end().catch(() => {});
    }
  }

  meta(name: string): Promise<string | undefined> {
    return readMeta(this.pool, name);
  }
  setMeta(name: string, value: string): Promise<void> {
    return writeMeta(this.pool, name, value);
  }

  /** Write what waits now, retrying while Postgres fails, for at most `ms`; for a spend rebuild and a clean shutdown. */
  async flush(ms = 5_000): Promise<void> {
    const end = Date.now() + ms;
    while ((this.pending || !this.up) && Date.now() < end) {
      await this.write();
      // Down (or its pool still holds connections to a server that restarted): try again within the bound.
      if (!this.up) await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, end - Date.now()))));
    }
  }

  /** Every project's spend in the periods containing `now`, from the daily rollup (budgets' periods are whole UTC days). */
  /** Every budget scope's spend: each project's, and each of its keys' (key-budget.ts). */
  async periodSpend(now: number): Promise<{ project: string; periodKey: string; pico: bigint }[]> {
    const periods = allPeriods(now).map((p) => ({ ...p, end: periodBounds(p.key).end }));
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT project, key_id, ${periods.map((_, i) => `COALESCE(sum(cost_pico) FILTER (WHERE bucket >= $${2 * i + 1} AND bucket < $${2 * i + 2}), 0) AS p${i}`).join(", ")}
       FROM mg_ledger_daily GROUP BY project, key_id`,
      periods.flatMap((p) => [p.start, p.end]),
    );
    // The rollups count a record at its ts; one charged to another period (chargedPeriods: begun before its period
    // started) is moved to the period it was charged in, as the stores' spend counters have it: out of the period it
    // ended in, into the one it began in (which after the clock stepped back may be the current one).
    const { rows: moved } = await this.pool.query<Record<string, string>>(
      `SELECT project, key_id, ${periods.map((_, i) => {
        const [s, e] = [`$${2 * i + 1}`, `$${2 * i + 2}`];
        return `COALESCE(sum(cost_pico) FILTER (WHERE ts >= ${e} AND charged_at >= ${s} AND charged_at < ${e}), 0)
          - COALESCE(sum(cost_pico) FILTER (WHERE ts >= ${s} AND ts < ${e} AND charged_at < ${s}), 0) AS p${i}`;
      }).join(", ")}
       FROM mg_ledger WHERE charged_at IS NOT NULL AND ts >= $${2 * periods.length + 1} GROUP BY project, key_id`,
      [...periods.flatMap((p) => [p.start, p.end]), Math.min(...periods.filter((p) => p.key !== "total").map((p) => p.start))],
    );
    const byScope = new Map<string, bigint[]>();
    for (const r of [...rows, ...moved]) {
      for (const scope of [r.project!, keyScope(r.project!, r.key_id!)]) {
        const sums = byScope.get(scope) ?? periods.map(() => 0n);
        periods.forEach((_, i) => (sums[i]! += BigInt(r[`p${i}`]!)));
        byScope.set(scope, sums);
      }
    }
    return [...byScope].flatMap(([scope, sums]) => periods.map((p, i) => ({ project: scope, periodKey: p.key, pico: sums[i]! })));
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const p = planUsage(q);
    const acc = new UsageAccumulator(p);
    for (const scan of p.scans) {
      const { sql, params } = scanSql(POSTGRES, p, scan);
      const { rows } = await this.query(sql, params);
      for (const r of rows) {
        const { b, group, c } = scanRow(p, r);
        acc.add(b, group, c);
      }
    }
    return acc.result();
  }

  async search(q: RequestSearch): Promise<RequestPage> {
    const p = planSearch(q);
    const { sql, params } = searchSql(POSTGRES, p);
    return pageOf(p, (await this.query(sql, params)).rows.map(fromRow));
  }

  async get(generationId: string): Promise<LedgerRecord | undefined> {
    const { rows } = await this.query("SELECT * FROM mg_ledger WHERE generation_id = $1 LIMIT 1", [generationId]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** The raw records (oldest first): for tests and the old `ledger()` listing, not for reports. */
  async ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    const { rows } = await this.query("SELECT * FROM mg_ledger WHERE ($1::text IS NULL OR project = $1) AND ts >= $2 ORDER BY ts, generation_id", [q.project ?? null, q.since ?? 0]);
    return rows.map(fromRow);
  }

  /** A read for the operator plane: Postgres down is a 503 STORE_UNAVAILABLE, not an opaque 500. */
  private async query(sql: string, params: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>> {
    try {
      return await this.pool.query(sql, params);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw storeUnavailable("postgres", "error", 1, err);
    }
  }

  /** Stop writing, try once more to empty the spool (bounded), keep the rest for the next process. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.maintenance);
    await this.writing;
    if (this.pending && this.up) await this.flush(2_000).catch(() => {});
    await this.spool.close();
    // Neither Postgres nor the spool's disk took these (each was said at append): they go with this process.
    const held = this.spool.heldInMemory();
    if (held.length) {
      this.o.log?.error("ledger: records of answered requests held in memory only are lost at shutdown: Postgres did not take them and the spool cannot be written",
        { records: held.length, generationIds: held.map((r) => r.generationId) });
    }
    await this.pool.end().catch(() => {});
  }
}

/** The spool of a read-only ledger: nothing waits, nothing may be appended. */
class ReadOnlySpool {
  readonly size = 0;
  readonly oldestAt = undefined;
  append(): Promise<Kept> {
    return Promise.reject(new Error("this Postgres ledger was opened read only"));
  }
  async drain(): Promise<number> {
    return 0;
  }
  async adoptGone(): Promise<number> {
    return 0;
  }
  heldInMemory(): Spooled[] {
    return [];
  }
  async close(): Promise<void> {}
}

/** The server answered and said no to who we are or what we asked for: a config problem, not an outage. */
function isConfigError(err: unknown): boolean {
  if (err instanceof StoreSchemaError) return true; // a newer release's tables: waiting will not change them
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^(28|3D|42)/.test(code);
}

/** Postgres refused the data (a value, a constraint), not the connection: retrying the same batch cannot help. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^(22|23)/.test(code);
}

function fromRow(r: Record<string, any>): LedgerRecord {
  const n = (v: unknown) => Number(v);
  return {
    generationId: r.generation_id, requestId: r.request_id, ts: n(r.ts), keyId: r.key_id, project: r.project, endpoint: r.endpoint,
    model: r.model, provider: r.provider, attempts: n(r.attempts), inputTokens: n(r.input_tokens), outputTokens: n(r.output_tokens),
    cacheReadTokens: n(r.cache_read_tokens), cacheWriteTokens: n(r.cache_write_tokens), reasoningTokens: n(r.reasoning_tokens),
    images: n(r.images), videoSeconds: n(r.video_seconds), searchUnits: n(r.search_units), webSearches: n(r.web_searches),
    costUsd: String(r.cost_usd), costPico: BigInt(r.cost_pico), latencyMs: n(r.latency_ms), ttftMs: r.ttft_ms === null ? null : n(r.ttft_ms),
    status: n(r.status), outcome: r.outcome, sandbox: r.sandbox === true, estimated: r.estimated === true,
    ...(r.attempt_list ? { attemptList: r.attempt_list } : {}),
    ...(r.tool_bytes != null ? { toolBytes: n(r.tool_bytes) } : {}), ...(r.tool_arguments != null ? { toolArguments: r.tool_arguments } : {}),
    ...(r.guardrail ? { guardrail: r.guardrail } : {}), ...(r.cache_hit === true ? { cacheHit: true } : {}),
    ...(r.charged_at != null ? { chargedAt: n(r.charged_at) } : {}),
  };
}

export const redactUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//***@");
