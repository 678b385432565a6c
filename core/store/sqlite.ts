// Store kind `sqlite`: one file in WAL mode. Ledger records and finished idempotency records are durable across
// restarts, kill -9, a power cut and a disk gone read-only: each is one committed transaction whose write-ahead log
// was fdatasync'd (off the event loop, shared by every commit meanwhile) before the response completes. A record is
// committed to the ledger's journal and moved into the ledger and its hourly and daily rollups in batches soon after
// (the view `ledger_all` is both). Spend is the ledger itself (an indexed SUM, cached in memory and kept current by
// record()), so the two can never disagree.
// Rate windows, reservations and claimed keys live in memory: one process per file (use Redis for replicas).
// Reports (usage, search) run in a reader thread (sqlite-reader.ts), never on the event loop.
import Database from "better-sqlite3";
import { closeSync, fdatasync, openSync } from "node:fs";
import { dirname } from "node:path";
import { LocalState } from "./local.ts";
import { Checkpointer, WAL_LIMIT_BYTES } from "./sqlite-checkpointer.ts";
import { SqliteReader } from "./sqlite-reader.ts";
import { chargedPeriods, periodBounds } from "./periods.ts";
import { keyScope, parseKeyScope } from "./key-budget.ts";
import { SqliteResponseStore } from "./responses-sqlite.ts";
import { SqliteMemoStore } from "./memo-sqlite.ts";
import { SqliteApiKeyStore } from "./api-keys-sqlite.ts";
import { SqliteResponseCacheStore } from "./response-cache-sqlite.ts";
import { DAY_MS, HOUR_MS, UsageAccumulator, planUsage } from "./rollup.ts";
import { ROLLUP_COUNTERS, ROLLUP_KEY, SQLITE, scanRow, scanSql, searchSql } from "./ledger-sql.ts";
import { pageOf, planSearch } from "./ledger-search.ts";
import { SCHEMA_VERSION, checkSchemaVersion } from "./schema-version.ts";
import type { LedgerRecord, RequestPage, RequestSearch, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import type {
  ClaimRenewal, IdempotencyBegin, LeaseRenewal, LedgerEntry, LedgerQuery, RateCharge, RateResult, RateState, Reservation, ReserveResult, Settlement, Store, StoredResponse, VerifyOptions,
} from "./types.ts";
import { makeDirs } from "./make-dirs.ts";

/** A rollup table: sums per bucket (hour or day start, ms) and group. */
const ROLLUP_TABLE = (name: string) => `CREATE TABLE IF NOT EXISTS ${name} (
  bucket INTEGER NOT NULL, project TEXT NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, endpoint TEXT NOT NULL,
  sandbox INTEGER NOT NULL, ${ROLLUP_COUNTERS.map((c) => `${c} ${c === "video_seconds" ? "REAL" : "INTEGER"} NOT NULL`).join(", ")},
  PRIMARY KEY (${ROLLUP_KEY.join(", ")})
) WITHOUT ROWID;`;

/**
 * Rollup rows summed from `from` (records; `where` picks which), added to the table's rows (counters summed where a
 * bucket and group exist). The same sums as countsOf (rollup.ts): an error is a status >= 400 or an outcome not ok.
 */
const ROLLUP_ADD = (name: string, bucketMs: number, from: string, where: string) => `INSERT INTO ${name} (${[...ROLLUP_KEY, ...ROLLUP_COUNTERS].join(", ")})
  SELECT (ts / ${bucketMs}) * ${bucketMs}, project, key_id, model, provider, endpoint, sandbox, COUNT(*),
    SUM(CASE WHEN status >= 400 OR outcome <> 'ok' THEN 1 ELSE 0 END), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens),
    SUM(cache_write_tokens), SUM(reasoning_tokens), SUM(images), SUM(video_seconds), SUM(search_units), SUM(web_searches), SUM(cost_pico)
  FROM ${from} WHERE ${where} GROUP BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (${ROLLUP_KEY.join(", ")}) DO UPDATE SET ${ROLLUP_COUNTERS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`;

/**
 * The journal records up to a generation id: what one move takes. None of them is in the ledger — a record enters the
 * journal only if neither table has it, and a move deletes what it inserts in the same transaction — so the rollups
 * add each once; OR IGNORE on the insert only keeps a file edited by hand from stopping every move.
 */
const UP_TO = "j.generation_id <= ?";
/** A record charged in [start, end) (charged_at when set, else ts); parameters start, start, end. */
const IN_PERIOD = "ts >= ? AND (charged_at IS NULL OR charged_at >= ?) AND COALESCE(charged_at, ts) < ?";

/**
 * The ledger's columns after generation_id, with their types: the ledger and its journal share them. Files from before
 * some of them existed gain them at open (the ALTERs in the constructor).
 */
const LEDGER_FIELDS = `request_id TEXT NOT NULL, ts INTEGER NOT NULL, key_id TEXT NOT NULL, project TEXT NOT NULL,
  endpoint TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, attempts INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL, images INTEGER NOT NULL, video_seconds REAL NOT NULL, search_units INTEGER NOT NULL,
  cost_usd TEXT NOT NULL, cost_pico INTEGER NOT NULL, latency_ms REAL NOT NULL, ttft_ms REAL, status INTEGER NOT NULL,
  outcome TEXT NOT NULL, sandbox INTEGER NOT NULL, estimated INTEGER NOT NULL, web_searches INTEGER NOT NULL DEFAULT 0,
  tool_bytes INTEGER, tool_arguments TEXT, guardrail TEXT, cache_hit INTEGER NOT NULL DEFAULT 0, attempt_list TEXT, charged_at INTEGER`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger (generation_id TEXT PRIMARY KEY, ${LEDGER_FIELDS});
CREATE INDEX IF NOT EXISTS ledger_project_ts ON ledger (project, ts);
CREATE INDEX IF NOT EXISTS ledger_ts ON ledger (ts, generation_id);
CREATE INDEX IF NOT EXISTS ledger_request ON ledger (request_id);
${ROLLUP_TABLE("ledger_hourly")}
${ROLLUP_TABLE("ledger_daily")}
CREATE TABLE IF NOT EXISTS ledger_journal (generation_id TEXT PRIMARY KEY, ${LEDGER_FIELDS}) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (
  scope TEXT PRIMARY KEY, hash TEXT NOT NULL, response TEXT NOT NULL, expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL);
`;

const COLUMNS = [
  "generation_id", "request_id", "ts", "key_id", "project", "endpoint", "model", "provider", "attempts", "input_tokens", "output_tokens",
  "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "images", "video_seconds", "search_units", "cost_usd", "cost_pico",
  "latency_ms", "ttft_ms", "status", "outcome", "sandbox", "estimated", "web_searches", "tool_bytes", "tool_arguments", "guardrail", "cache_hit",
  "attempt_list", "charged_at",
];

const COLUMN_LIST = COLUMNS.join(", ");

/** Every record, moved to the ledger or still in the journal: what readers of the file (and the store's own lookups) see. */
const LEDGER_ALL = `CREATE VIEW ledger_all AS SELECT ${COLUMN_LIST} FROM ledger UNION ALL SELECT ${COLUMN_LIST} FROM ledger_journal`;

/** Journal records moved per drain transaction: one holds the event loop for ~0.4 ms (bench/store/group-commit.ts). */
const DRAIN_CHUNK = 64;
/** How long a record may wait in the journal before it is moved, and how many may gather before they are moved at once. */
const DRAIN_AFTER_MS = 100;
const DRAIN_AT_ROWS = 256;

function toRow(e: LedgerRecord): unknown[] {
  return [
    e.generationId, e.requestId, e.ts, e.keyId, e.project, e.endpoint, e.model, e.provider, e.attempts, e.inputTokens, e.outputTokens,
    e.cacheReadTokens, e.cacheWriteTokens, e.reasoningTokens, e.images, e.videoSeconds, e.searchUnits, e.costUsd, e.costPico,
    e.latencyMs, e.ttftMs, e.status, e.outcome, e.sandbox ? 1 : 0, e.estimated ? 1 : 0, e.webSearches ?? 0, e.toolBytes ?? null, e.toolArguments ?? null, e.guardrail ?? null, e.cacheHit ? 1 : 0,
    e.attemptList ? JSON.stringify(e.attemptList) : null, e.chargedAt ?? null,
  ];
}

export function fromRow(r: any): LedgerRecord {
  const n = (v: unknown) => Number(v);
  return {
    generationId: r.generation_id, requestId: r.request_id, ts: n(r.ts), keyId: r.key_id, project: r.project, endpoint: r.endpoint,
    model: r.model, provider: r.provider, attempts: n(r.attempts), inputTokens: n(r.input_tokens), outputTokens: n(r.output_tokens),
    cacheReadTokens: n(r.cache_read_tokens), cacheWriteTokens: n(r.cache_write_tokens), reasoningTokens: n(r.reasoning_tokens),
    images: n(r.images), videoSeconds: n(r.video_seconds), searchUnits: n(r.search_units), costUsd: r.cost_usd, costPico: BigInt(r.cost_pico),
    latencyMs: n(r.latency_ms), ttftMs: r.ttft_ms === null ? null : n(r.ttft_ms), status: n(r.status), outcome: r.outcome,
    sandbox: n(r.sandbox) === 1, estimated: n(r.estimated) === 1, webSearches: n(r.web_searches ?? 0),
    ...(r.tool_bytes != null ? { toolBytes: n(r.tool_bytes) } : {}), ...(r.tool_arguments != null ? { toolArguments: r.tool_arguments } : {}),
    ...(r.guardrail ? { guardrail: r.guardrail } : {}),
    ...(n(r.cache_hit ?? 0) === 1 ? { cacheHit: true } : {}),
    ...(r.attempt_list ? { attemptList: JSON.parse(r.attempt_list) } : {}),
    ...(r.charged_at != null ? { chargedAt: n(r.charged_at) } : {}),
  };
}

const NOTHING = () => {};

/**
 * The file's schema version (meta.schema_version; absent before versions existed), refused when a newer release
 * wrote it: read before anything is created or migrated, so such a file is left exactly as it was.
 */
export function sqliteSchemaVersion(db: Database.Database, path: string): number | undefined {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get()) return undefined;
  const row = db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").get() as { value: string } | undefined;
  return checkSchemaVersion("sqlite", `the SQLite file ${path}`, row?.value);
}

/** What the operator reads when the file is damaged: which file, what SQLite found, and what to do. */
export function damaged(path: string, found: string): string {
  return `store: the SQLite file ${path} is damaged (${found}). Restore it from a backup, or move it aside (with its -wal ` +
    "and -shm files) to start with an empty ledger; `sqlite3 FILE .recover` can salvage what is readable";
}

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  private readonly db: Database.Database;
  private readonly local = new LocalState();
  /** project\nperiodKey -> spend, loaded from the ledger once and kept current by record(). */
  private readonly spend = new Map<string, bigint>();
  private readonly stmts;
  private readonly sweeper: NodeJS.Timeout;
  /** Writes waiting for the next group commit: `write` runs inside the transaction, `done` after it committed. */
  private readonly queue: { write(): void; done(): void; resolve(): void; reject(err: unknown): void }[] = [];
  private readonly commitAll: (writes: (() => void)[]) => void;
  /** Started on the first group commit (a store that only reads, like the `usage` command, needs none). */
  private checkpointer?: Checkpointer;
  private readonly walLimitBytes: number;
  readonly responses: SqliteResponseStore;
  readonly memos: SqliteMemoStore;
  readonly apiKeys: SqliteApiKeyStore;
  readonly responseCache: SqliteResponseCacheStore;

  /** Commits resolved only once the write-ahead log is on disk (see syncWal). */
  private readonly fsyncCommits: boolean;
  private readonly drainAfterMs: number;
  private syncing = false;
  private walFd: number | undefined;
  /** Held while this process serves the file (sqlite-process-lock.ts), released by close(); absent for readers such as the CLI. */
  private readonly servingLock?: { release(): void };

  /**
   * `busyTimeoutMs`: how long a write may wait for another process's lock (it blocks the event loop meanwhile).
   * `fsync` (default true): a write resolves only once it is on disk, not only handed to the OS.
   * `walLimitBytes`: the write-ahead log's bound under steady writes (sqlite-checkpointer.ts; tests set a small one).
   */
  constructor(
    readonly path: string,
    opts: {
      busyTimeoutMs?: number; fsync?: boolean; servingLock?: { release(): void }; walLimitBytes?: number;
      /** How long a record may wait in the journal (tests that look at it there set it long). */
      drainAfterMs?: number;
    } = {},
  ) {
    if (path !== ":memory:") makeDirs(dirname(path));
    this.fsyncCommits = path !== ":memory:" && opts.fsync !== false;
    this.drainAfterMs = opts.drainAfterMs ?? DRAIN_AFTER_MS;
    this.servingLock = opts.servingLock;
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    // NORMAL in WAL mode: every commit reaches the OS before the call returns (safe against kill -9); SQLite itself
    // fsyncs only at checkpoints, so the store fsyncs the log off the event loop before a write resolves (syncWal).
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
    // The commit that starts the WAL over (after the checkpointer's RESTART) truncates the file to this.
    this.walLimitBytes = opts.walLimitBytes ?? WAL_LIMIT_BYTES;
    this.db.pragma(`journal_size_limit = ${this.walLimitBytes}`);
    try {
      sqliteSchemaVersion(this.db, path);
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.db.exec(SCHEMA);
    // Ledgers written before web searches were billed have no such column: add it (existing rows count none).
    const columns = this.db.prepare("PRAGMA table_info(ledger)").all() as { name: string }[];
    if (!columns.some((c) => c.name === "web_searches")) this.db.exec("ALTER TABLE ledger ADD COLUMN web_searches INTEGER NOT NULL DEFAULT 0");
    if (!columns.some((c) => c.name === "tool_bytes")) this.db.exec("ALTER TABLE ledger ADD COLUMN tool_bytes INTEGER; ALTER TABLE ledger ADD COLUMN tool_arguments TEXT");
    // Nor what guardrails did (null: none acted).
    if (!columns.some((c) => c.name === "guardrail")) this.db.exec("ALTER TABLE ledger ADD COLUMN guardrail TEXT");
    // ...nor attempt lists (their records keep only the count).
    if (!columns.some((c) => c.name === "attempt_list")) this.db.exec("ALTER TABLE ledger ADD COLUMN attempt_list TEXT");
    this.stmts0 = {
      maxRowid: this.db.prepare("SELECT COALESCE(MAX(rowid), 0) AS m FROM ledger").safeIntegers(true),
      setMeta: this.db.prepare("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value"),
    };
    this.openRollups();
    this.responses = new SqliteResponseStore(this.db);
    this.memos = new SqliteMemoStore(this.db, (write) => this.enqueue(write));
    this.apiKeys = new SqliteApiKeyStore(this.db, (write) => this.enqueue(write));
    if (!columns.some((c) => c.name === "cache_hit")) this.db.exec("ALTER TABLE ledger ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0");
    // ...nor when a record's cost counts in an earlier budget period than its ts (null: its ts's), in either table.
    for (const table of ["ledger", "ledger_journal"]) {
      const has = (this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === "charged_at");
      if (!has) this.db.exec(`ALTER TABLE ${table} ADD COLUMN charged_at INTEGER`);
    }
    this.responseCache = new SqliteResponseCacheStore(this.db, (write, done) => this.enqueue(write, done));
    // Made again when its text changes (a release that adds a column): a view is fixed to the columns it was made with.
    const view = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'ledger_all'").get() as { sql: string } | undefined;
    if (view?.sql !== LEDGER_ALL) this.db.exec(`DROP VIEW IF EXISTS ledger_all; ${LEDGER_ALL}`);
    // Migrated: from now on a release that does not know this layout's successor can tell it is one.
    this.stmts0.setMeta.run("schema_version", String(SCHEMA_VERSION.sqlite));
    this.stmts = {
      // A record goes to the journal unless the ledger or the journal has it already (a replay): `changes` says which.
      journal: this.db.prepare(`INSERT OR IGNORE INTO ledger_journal (${COLUMN_LIST}) SELECT ${COLUMNS.map(() => "?").join(", ")}
        WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE generation_id = ?)`),
      drainUpTo: this.db.prepare(`SELECT MAX(generation_id) AS last FROM (SELECT generation_id FROM ledger_journal ORDER BY generation_id LIMIT ${DRAIN_CHUNK})`),
      drainHourly: this.db.prepare(ROLLUP_ADD("ledger_hourly", HOUR_MS, "ledger_journal j", UP_TO)),
      drainDaily: this.db.prepare(ROLLUP_ADD("ledger_daily", DAY_MS, "ledger_journal j", UP_TO)),
      drainMove: this.db.prepare(`INSERT OR IGNORE INTO ledger (${COLUMN_LIST}) SELECT ${COLUMN_LIST} FROM ledger_journal j WHERE ${UP_TO}`),
      drainDelete: this.db.prepare("DELETE FROM ledger_journal WHERE generation_id <= ?"),
      get: this.db.prepare(`SELECT * FROM ledger_all WHERE generation_id = ?`).safeIntegers(true),
      // A period's spend: records charged to it (chargedPeriods), read over the (project, ts) index — a record's
      // charged_at, when set, is before its ts, so every one charged since `start` has ts >= start. Charged before
      // the period's end, too: after the clock stepped back, a later period's records are in the file already.
      sum: this.db.prepare(`SELECT COALESCE(SUM(cost_pico), 0) AS s FROM ledger_all WHERE project = ? AND ${IN_PERIOD}`).safeIntegers(true),
      keySum: this.db.prepare(`SELECT COALESCE(SUM(cost_pico), 0) AS s FROM ledger_all WHERE project = ? AND key_id = ? AND ${IN_PERIOD}`).safeIntegers(true),
      list: this.db.prepare("SELECT * FROM ledger_all WHERE (? IS NULL OR project = ?) AND ts >= ? ORDER BY ts").safeIntegers(true),
      idemGet: this.db.prepare("SELECT hash, response, expires_at FROM idempotency WHERE scope = ?"),
      idemPut: this.db.prepare("INSERT OR REPLACE INTO idempotency (scope, hash, response, expires_at) VALUES (?, ?, ?, ?)"),
      sweep: this.db.prepare("DELETE FROM idempotency WHERE expires_at <= ?"),
      probe: this.db.prepare("INSERT OR REPLACE INTO probe (id, at) VALUES (1, ?)"),
    };
    // IMMEDIATE: a deferred transaction that reads before it writes gets SQLITE_BUSY at once, without busy_timeout,
    // while the checkpointer's RESTART holds the write lock; this one waits for it (a few ms).
    this.commitAll = this.db.transaction((writes: (() => void)[]) => {
      for (const w of writes) w();
    }).immediate;
    this.moveChunk = this.db.transaction((): number => {
      const { last } = this.stmts.drainUpTo.get() as { last: string | null };
      if (last === null) return 0;
      // Rows another (older) release put in the ledger meanwhile first: none normally, one index lookup.
      this.catchUpRollups();
      this.stmts.drainHourly.run(last);
      this.stmts.drainDaily.run(last);
      this.stmts.drainMove.run(last);
      const moved = this.stmts.drainDelete.run(last).changes;
      this.markRolledUp();
      return moved;
    }).immediate;
    // What a previous run left in the journal (it stopped before moving it) is moved now.
    this.journaled = (this.db.prepare("SELECT EXISTS (SELECT 1 FROM ledger_journal) AS e").get() as { e: number }).e;
    this.drainJournal();
    const sweep = () => {
      const now = Date.now();
      this.stmts.sweep.run(now);
      this.memos.sweep(now);
    };
    sweep();
    this.sweeper = setInterval(sweep, 3_600_000).unref();
  }

  async rateLimit(charges: RateCharge[], now: number): Promise<RateResult> {
    return this.local.rateLimit(charges, now);
  }
  async rateAdjust(key: string, limit: number, delta: number, now: number): Promise<void> {
    this.local.rateAdjust(key, limit, delta, now);
  }

  async rateState(windows: { key: string; limit: number }[], now: number): Promise<RateState[]> {
    return this.local.rateState(windows, now);
  }
  async reserved(project: string, periodKey: string, now: number): Promise<bigint> {
    return this.local.reserved(project, periodKey, now);
  }

  private spentSync(project: string, periodKey: string, periodStart: number): bigint {
    const k = `${project}\n${periodKey}`;
    let s = this.spend.get(k);
    if (s === undefined) {
      // `project` is a budget scope: a project, or one of its keys (key-budget.ts).
      const key = parseKeyScope(project);
      const range = [periodStart, periodStart, periodBounds(periodKey).end];
      s = ((key ? this.stmts.keySum.get(key.project, key.keyId, ...range) : this.stmts.sum.get(project, ...range)) as { s: bigint }).s;
      this.spend.set(k, s);
    }
    return s;
  }

  async reserve(r: Reservation, now: number): Promise<ReserveResult> {
    return this.local.reserve(r, this.spentSync(r.project, r.periodKey, r.periodStart), now);
  }
  async release(s: Settlement): Promise<void> {
    this.local.release(s);
  }
  async renewHolds(holds: LeaseRenewal[], now: number): Promise<void> {
    this.local.renew(holds, now);
  }
  async spent(project: string, periodKey: string, periodStart: number): Promise<bigint> {
    return this.spentSync(project, periodKey, periodStart);
  }

  /**
   * Group commit: writes handed in during one event-loop turn (ledger records, finished idempotency records), or while
   * the previous fsync ran, go in one transaction — one WAL append instead of one per request. The promise resolves only after the commit, so a
   * caller that awaits it before completing its response never loses what it answered.
   */
  private enqueue(write: () => void, done: () => void = NOTHING): Promise<void> {
    return new Promise((resolve, reject) => {
      // No wrapper closure per write (on every request's ledger record): flush calls done, then resolve.
      this.queue.push({ write, done, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    // While an fsync runs, what arrives waits for it and goes in one transaction when it returns: its writes could not
    // resolve before the next fsync anyway, and one commit of many records writes each touched page (ledger, its
    // indexes, the rollups) once, where a commit per event-loop turn wrote them again and again (issue 32).
    if (this.syncing) return;
    const batch = this.queue.splice(0);
    if (!batch.length) return;
    try {
      this.commitAll(batch.map((b) => b.write));
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    this.checkpointAfterWrite();
    for (const b of batch) b.done();
    if (!this.fsyncCommits) {
      for (const b of batch) b.resolve();
      return;
    }
    this.syncWal(batch);
  }

  /**
   * Durable before resolved: the write-ahead log is fdatasync'd in libuv's thread pool, never on the event loop; the
   * writes handed in while one fsync runs share the next commit and fsync. A failed fsync (a disk gone bad or read-only) rejects the
   * writes it covered, whose callers keep their records elsewhere (the spool); a replay is idempotent.
   */
  private syncWal(batch: { resolve(): void; reject(err: unknown): void }[]): void {
    this.syncing = true;
    const finish = (err: unknown) => {
      this.syncing = false;
      for (const b of batch) err ? b.reject(err) : b.resolve();
      this.flush();
    };
    try {
      this.walFd ??= openSync(`${this.path}-wal`, "r");
    } catch (err) {
      return finish(err);
    }
    fdatasync(this.walFd, finish);
  }

  /** WAL checkpoints run in a worker thread, not inside a commit on the event loop (sqlite-checkpointer.ts). */
  private checkpointAfterWrite(): void {
    if (this.path === ":memory:") return;
    if (!this.checkpointer) {
      this.db.pragma("wal_autocheckpoint = 0");
      this.checkpointer = new Checkpointer(this.path, () => {
        if (this.db.open) this.db.pragma("wal_autocheckpoint = 1000");
      }, { walLimitBytes: this.walLimitBytes });
    }
    this.checkpointer.wrote();
  }

  /**
   * A record is committed (and fsync'd) to the journal, one small table without indexes: a commit writes a page or two
   * to the write-ahead log, where a record put straight into the ledger wrote eight (the row, its primary key, three
   * indexes, two rollups) — the largest cost of a request on this store (issue 32). The journal is moved into the
   * ledger and its rollups in batches (drainJournal), shortly after, before any report reads them, and at open.
   */
  record(entry: LedgerRecord, settle?: Settlement): Promise<void> {
    let added = false;
    return this.enqueue(
      () => {
        const row = toRow(entry);
        row.push(entry.generationId);
        added = this.stmts.journal.run(...row).changes === 1;
      },
      () => {
        if (added) {
          this.journaled++;
          this.drainAfter(this.journaled >= DRAIN_AT_ROWS ? 0 : this.drainAfterMs);
          const scope = keyScope(entry.project, entry.keyId);
          for (const p of chargedPeriods(entry)) {
            for (const k of [`${entry.project}\n${p.key}`, `${scope}\n${p.key}`]) {
              const s = this.spend.get(k);
              if (s !== undefined) this.spend.set(k, s + entry.costPico);
            }
          }
        }
        // Spend is counted before the reservation goes, so a concurrent reserve never misses both.
        if (settle) this.local.release(settle);
      },
    );
  }

  /** Records in the journal since it was last empty (this process's count; 1 for what an earlier run left). */
  private journaled: number;
  private drainTimer: NodeJS.Timeout | undefined;
  private drainDue = Infinity;
  private readonly moveChunk: () => number;

  /** One move of the journal, in `ms` or sooner (a move already due sooner stands). */
  private drainAfter(ms: number): void {
    const due = Date.now() + ms;
    if (this.drainTimer && this.drainDue <= due) return;
    clearTimeout(this.drainTimer);
    this.drainDue = due;
    this.drainTimer = setTimeout(() => {
      this.drainTimer = undefined;
      this.drainJournal(DRAIN_CHUNK);
    }, ms).unref();
  }

  /**
   * Moves journal records into the ledger and adds them to the rollups, DRAIN_CHUNK per transaction, in order of
   * generation id; each moves a record once, however often drained. `limit`: the timer's share (the rest goes at the
   * next timer); readers move everything first. Not fsync'd: the journal keeps each record until the move that
   * deletes it is on disk (the next record's fsync), and a move lost to a power cut is made again at the next open.
   * A move that fails (the disk full or read-only) leaves the journal as it was: records are kept, reports lag.
   */
  private drainJournal(limit = Infinity): void {
    if (!this.journaled || !this.db.open) return;
    let moved = 0;
    try {
      for (let n = this.moveChunk(); n > 0; n = this.moveChunk()) {
        moved += n;
        if (moved >= limit) {
          this.journaled = Math.max(1, this.journaled - moved);
          this.drainAfter(0); // the rest in the next turns: requests are served in between
          return;
        }
      }
      this.journaled = 0;
    } catch {
      this.drainAfter(1000);
    } finally {
      if (moved) this.checkpointAfterWrite();
    }
  }

  async ledger(q: LedgerQuery): Promise<LedgerEntry[]> {
    return this.stmts.list.all(q.project ?? null, q.project ?? null, q.since ?? 0).map(fromRow);
  }

  /**
   * The rollups at open. They count exactly the ledger's rows up to rowid meta.rollup_rowid (the high-water mark,
   * moved with every move of the journal). A file from before rollups, or from before the mark (whose rollups may
   * miss rows an older release added after a newer one had built them), has them rebuilt from the ledger once; rows
   * past the mark (an older release wrote them since: a downgrade, or its gateway serving while a newer `usage` ran)
   * are counted now. One transaction; run again, it changes nothing.
   */
  private openRollups(): void {
    const meta = (name: string) => (this.db.prepare("SELECT value FROM meta WHERE name = ?").get(name) as { value: string } | undefined)?.value;
    const mark = meta("rollup_rowid");
    this.db.transaction(() => {
      if (meta("rollups") === undefined || mark === undefined || !/^\d+$/.test(mark)) {
        this.db.exec("DELETE FROM ledger_hourly; DELETE FROM ledger_daily;");
        this.db.exec(ROLLUP_ADD("ledger_hourly", HOUR_MS, "ledger", "true"));
        this.db.exec(ROLLUP_ADD("ledger_daily", DAY_MS, "ledger", "true"));
        this.stmts0.setMeta.run("rollups", "1");
        this.markRolledUp();
        return;
      }
      this.rollupMark = BigInt(mark);
      this.catchUpRollups();
    }).immediate();
  }

  /** The ledger's last rowid counted in the rollups (meta.rollup_rowid). */
  private rollupMark = 0n;
  private readonly stmts0: { maxRowid: Database.Statement; setMeta: Database.Statement };

  /**
   * Inside a transaction: ledger rows past the mark were put there by another release, which may or may not have
   * added them to the rollups — so the hours and days they fall in are summed again from the ledger (the rollups are
   * exactly the ledger's sums), never added to. Then the mark moves past them.
   */
  private catchUpRollups(): void {
    const top = (this.stmts0.maxRowid.get() as { m: bigint }).m;
    if (top <= this.rollupMark) return;
    for (const [table, ms] of [["ledger_hourly", HOUR_MS], ["ledger_daily", DAY_MS]] as const) {
      const buckets = (this.db.prepare(`SELECT DISTINCT (ts / ${ms}) * ${ms} AS b FROM ledger WHERE rowid > ?`).all(this.rollupMark) as { b: number }[]).map((r) => r.b);
      const clear = this.db.prepare(`DELETE FROM ${table} WHERE bucket = ?`);
      const add = this.db.prepare(ROLLUP_ADD(table, ms, "ledger", "ts >= ? AND ts < ?"));
      for (const b of buckets) {
        clear.run(b);
        add.run(b, b + ms);
      }
    }
    this.markRolledUp(top);
  }

  /** Every ledger row so far is in the rollups (inside the transaction that made it so). */
  private markRolledUp(top = (this.stmts0.maxRowid.get() as { m: bigint }).m): void {
    if (top === this.rollupMark && top !== 0n) return;
    this.rollupMark = top;
    this.stmts0.setMeta.run("rollup_rowid", String(top));
  }

  /** Prepared once per distinct SQL text (a query's shape: its groupBy, filters, bucket). */
  private prepared(sql: string): Database.Statement {
    let s = this.queries.get(sql);
    if (!s) {
      if (this.queries.size > 200) this.queries.clear();
      this.queries.set(sql, (s = this.db.prepare(sql).safeIntegers(true)));
    }
    return s;
  }
  private readonly queries = new Map<string, Database.Statement>();

  /** A report's query: in the reader thread for a file (never on the event loop), here for an in-memory database. */
  private read(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    if (this.path === ":memory:") return Promise.resolve(this.prepared(sql).all(...params) as Record<string, unknown>[]);
    return (this.reader ??= new SqliteReader(this.path)).all(sql, params);
  }
  private reader?: SqliteReader;

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    this.drainJournal(); // reports read the rollups and the ledger, not the journal
    const p = planUsage(q);
    const acc = new UsageAccumulator(p);
    for (const scan of p.scans) {
      const { sql, params } = scanSql(SQLITE, p, scan);
      for (const r of await this.read(sql, params)) {
        const { b, group, c } = scanRow(p, r);
        acc.add(b, group, c);
      }
    }
    return acc.result();
  }

  async search(q: RequestSearch): Promise<RequestPage> {
    this.drainJournal();
    const p = planSearch(q);
    const { sql, params } = searchSql(SQLITE, p);
    return pageOf(p, (await this.read(sql, params)).map(fromRow));
  }

  async get(generationId: string): Promise<LedgerRecord | undefined> {
    const r = this.stmts.get.get(generationId);
    return r ? fromRow(r) : undefined;
  }

  async idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, now: number): Promise<IdempotencyBegin> {
    return this.local.claim(scope, hash, owner, leaseMs, now, () => {
      const row = this.stmts.idemGet.get(scope) as { hash: string; response: string; expires_at: number } | undefined;
      if (!row || row.expires_at <= now) return undefined;
      return row.hash === hash ? { state: "done", response: JSON.parse(row.response) } : { state: "mismatch" };
    });
  }
  async idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number, now: number): Promise<void> {
    const json = JSON.stringify(response);
    await this.enqueue(() => this.stmts.idemPut.run(scope, hash, json, now + ttlMs));
    this.local.unclaim(scope, owner);
  }
  async idempotencyRelease(scope: string, owner: string): Promise<void> {
    this.local.unclaim(scope, owner);
  }
  async renewClaims(claims: ClaimRenewal[], now: number): Promise<void> {
    this.local.renewClaims(claims, now);
  }

  /** A write through the group commit: fails while the disk is full or read-only, like a ledger record would. */
  probe(): Promise<void> {
    return this.enqueue(() => this.stmts.probe.run(Date.now()));
  }

  /** A damaged file is refused at start, not found by the first request that reads the broken page. */
  async verify(o: VerifyOptions): Promise<void> {
    if (o.integrity === "off" || this.path === ":memory:") return;
    const pragma = o.integrity === "full" ? "integrity_check(20)" : "quick_check(20)";
    let problems: string[];
    try {
      problems = (this.db.pragma(pragma) as Record<string, string>[]).map((r) => Object.values(r)[0]!).filter((v) => v !== "ok");
    } catch (err) {
      problems = [(err as Error).message];
    }
    if (problems.length) throw new Error(damaged(this.path, `${o.integrity === "full" ? "integrity_check" : "quick_check"}: ${problems.slice(0, 5).join("; ")}`));
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.responseCache.close();
    await this.reader?.close();
    this.flush();
    while (this.syncing || this.queue.length) await new Promise((r) => setTimeout(r, 5));
    clearTimeout(this.drainTimer);
    this.drainJournal();
    if (this.walFd !== undefined) closeSync(this.walFd);
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
    this.servingLock?.release();
  }
}
