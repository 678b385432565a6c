// The Postgres ledger's tables: raw records partitioned by month on their time (ms since the epoch), partitions made
// ahead and dropped past the retention; hourly and daily rollups, kept for good (they are small: one row per group
// and bucket). Schema changes and partition work take an advisory lock, so replicas starting together never race.
import type pg from "pg";
import { ROLLUP_COUNTERS, ROLLUP_KEY } from "./ledger-sql.ts";
import { SCHEMA_VERSION, checkSchemaVersion } from "./schema-version.ts";

/** Any 64-bit number the replicas agree on: the lock for schema and partition changes. */
const LOCK = 7_302_514_417_861;
/** ...and the one the Redis ledger stream's import runs under (one importer at a time). */
export const IMPORT_LOCK = 7_302_514_417_862;

/** mg_meta's row: the id of the last Redis ledger stream entry imported ("0-0": none yet; absent: no import). */
export const IMPORT_MARK = "redis_ledger_import";

const ROLLUP_TABLE = (name: string) => `CREATE TABLE IF NOT EXISTS ${name} (
  bucket bigint NOT NULL, project text NOT NULL, key_id text NOT NULL, model text NOT NULL, provider text NOT NULL, endpoint text NOT NULL,
  sandbox boolean NOT NULL, ${ROLLUP_COUNTERS.map((c) => `${c} ${c === "video_seconds" ? "double precision" : "bigint"} NOT NULL`).join(", ")},
  PRIMARY KEY (${ROLLUP_KEY.join(", ")})
)`;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS mg_ledger (
    generation_id text COLLATE "C" NOT NULL, request_id text NOT NULL, ts bigint NOT NULL, key_id text NOT NULL, project text NOT NULL,
    endpoint text NOT NULL, model text NOT NULL, provider text NOT NULL, attempts integer NOT NULL,
    input_tokens bigint NOT NULL, output_tokens bigint NOT NULL, cache_read_tokens bigint NOT NULL, cache_write_tokens bigint NOT NULL,
    reasoning_tokens bigint NOT NULL, images bigint NOT NULL, video_seconds double precision NOT NULL, search_units bigint NOT NULL,
    web_searches bigint NOT NULL, cost_usd numeric NOT NULL, cost_pico bigint NOT NULL, latency_ms double precision NOT NULL,
    ttft_ms double precision, status integer NOT NULL, outcome text NOT NULL, sandbox boolean NOT NULL, estimated boolean NOT NULL,
    attempt_list jsonb, tool_bytes bigint, tool_arguments text, guardrail text, cache_hit boolean NOT NULL DEFAULT false, charged_at bigint,
    PRIMARY KEY (generation_id, ts)
  ) PARTITION BY RANGE (ts)`,
  "CREATE INDEX IF NOT EXISTS mg_ledger_ts ON mg_ledger (ts, generation_id)",
  "CREATE INDEX IF NOT EXISTS mg_ledger_project_ts ON mg_ledger (project, ts)",
  "CREATE INDEX IF NOT EXISTS mg_ledger_request ON mg_ledger (request_id)",
  ROLLUP_TABLE("mg_ledger_hourly"),
  ROLLUP_TABLE("mg_ledger_daily"),
  // Spend per project is rebuilt from the daily rollup after a Redis loss.
  "CREATE INDEX IF NOT EXISTS mg_ledger_daily_project ON mg_ledger_daily (project, bucket)",
];

/**
 * Columns records gained after the first release of this table (MCP tool calls, guardrails, the response cache),
 * added to a table made before them: on the partitioned parent, so its partitions and those made later get them;
 * old rows read as absent / false. Only the missing ones, so a start does not lock the table for nothing.
 */
const ADDED_COLUMNS: [string, string][] = [
  ["tool_bytes", "bigint"], ["tool_arguments", "text"], ["guardrail", "text"], ["cache_hit", "boolean NOT NULL DEFAULT false"],
  ["charged_at", "bigint"],
];

/** Month start (UTC, ms) of a time, and of the month after. */
export function monthOf(ts: number): { start: number; end: number; name: string } {
  const d = new Date(ts);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const name = `mg_ledger_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
  return { start, end, name };
}

async function locked<T>(pool: pg.Pool, f: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query("SELECT pg_advisory_xact_lock($1)", [LOCK]);
    const v = await f(c);
    await c.query("COMMIT");
    return v;
  } catch (err) {
    await c.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

/** Small facts about the ledger's database: its schema version, how far the Redis ledger stream was imported. */
const META = "CREATE TABLE IF NOT EXISTS mg_meta (name text PRIMARY KEY, value text NOT NULL)";

export async function createSchema(pool: pg.Pool): Promise<void> {
  await locked(pool, async (c) => {
    // A newer release's tables are refused before anything is created or altered.
    await checkPostgresSchema(c);
    for (const sql of [...SCHEMA, META]) await c.query(sql);
    // A ledger with no record yet at its first contact takes the Redis ledger stream's earlier records
    // (redis-ledger-import.ts): decided here once, under the lock, so records spooled later cannot undo it.
    await c.query(`INSERT INTO mg_meta (name, value) SELECT '${IMPORT_MARK}', '0-0' WHERE NOT EXISTS (SELECT 1 FROM mg_ledger) ON CONFLICT (name) DO NOTHING`);
    const { rows } = await c.query<{ name: string }>("SELECT attname AS name FROM pg_attribute WHERE attrelid = 'mg_ledger'::regclass AND attnum > 0 AND NOT attisdropped");
    const have = new Set(rows.map((r) => r.name));
    for (const [name, type] of ADDED_COLUMNS) if (!have.has(name)) await c.query(`ALTER TABLE mg_ledger ADD COLUMN ${name} ${type}`);
    // The few records charged to an earlier budget period than their ts (begun before a period ended): a spend
    // rebuild takes them out of the rollups' sums (postgres-ledger.ts periodSpend).
    await c.query("CREATE INDEX IF NOT EXISTS mg_ledger_charged ON mg_ledger (ts) WHERE charged_at IS NOT NULL");
    await c.query("INSERT INTO mg_meta (name, value) VALUES ('schema_version', $1) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value", [String(SCHEMA_VERSION.postgres)]);
  });
}

/** A fact of mg_meta (undefined when absent, or before the table exists). */
export async function readMeta(q: pg.Pool | pg.ClientBase, name: string): Promise<string | undefined> {
  const { rows: has } = await q.query<{ meta: boolean }>("SELECT to_regclass('mg_meta') IS NOT NULL AS meta");
  if (!has[0]?.meta) return undefined;
  const { rows } = await q.query<{ value: string }>("SELECT value FROM mg_meta WHERE name = $1", [name]);
  return rows[0]?.value;
}

/** A ledger a newer release made is refused (StoreSchemaError); one from before versions, or none yet, passes. */
export async function checkPostgresSchema(q: pg.Pool | pg.ClientBase): Promise<void> {
  checkSchemaVersion("postgres", "the ledger in this database", await readMeta(q, "schema_version"));
}

export async function writeMeta(pool: pg.Pool, name: string, value: string): Promise<void> {
  await pool.query("INSERT INTO mg_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value", [name, value]);
}

/** Make the month partitions of these times (those not made yet); concurrent replicas wait on the lock. */
export async function ensurePartitions(pool: pg.Pool, months: { start: number; end: number; name: string }[]): Promise<void> {
  if (!months.length) return;
  await locked(pool, async (c) => {
    for (const m of months) await c.query(`CREATE TABLE IF NOT EXISTS ${m.name} PARTITION OF mg_ledger FOR VALUES FROM (${m.start}) TO (${m.end})`);
  });
}

/** Drop the month partitions that end before `before` (ms); their records are gone, their rollups stay. */
export async function dropPartitionsBefore(pool: pg.Pool, before: number): Promise<string[]> {
  return locked(pool, async (c) => {
    const { rows } = await c.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'mg_ledger'",
    );
    const dropped: string[] = [];
    for (const { name } of rows) {
      const m = /^mg_ledger_p(\d{4})_(\d{2})$/.exec(name);
      if (!m) continue;
      const end = Date.UTC(Number(m[1]), Number(m[2]), 1);
      if (end > before) continue;
      await c.query(`DROP TABLE IF EXISTS ${name}`);
      dropped.push(name);
    }
    return dropped;
  });
}
