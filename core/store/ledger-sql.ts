// The SQL both SQL stores (SQLite and Postgres) run for the operator plane: one rollup scan of a usage question,
// and one page of a request search. Column names are fixed here; values are always parameters.
import { COUNTERS, COUNTER_COLUMNS, DAY_MS, DIMENSION_COLUMNS, type PlannedUsage, type RollupCounts, type RollupScan } from "./rollup.ts";
import type { PlannedSearch } from "./ledger-search.ts";
import type { UsageDimension } from "../contracts/ledger-reader.ts";

export interface Dialect {
  /** The n-th parameter (1-based): "?" or "$n". */
  param(n: number): string;
  /** The literal for "not sandbox traffic". */
  notSandbox: string;
  hourly: string;
  daily: string;
  raw: string;
}

export const SQLITE: Dialect = { param: () => "?", notSandbox: "0", hourly: "ledger_hourly", daily: "ledger_daily", raw: "ledger" };
export const POSTGRES: Dialect = { param: (n) => `$${n}`, notSandbox: "false", hourly: "mg_ledger_hourly", daily: "mg_ledger_daily", raw: "mg_ledger" };

/** Rollup columns: the bucket, the dimensions, sandbox, then the counters. */
export const ROLLUP_KEY = ["bucket", "project", "key_id", "model", "provider", "endpoint", "sandbox"];
export const ROLLUP_COUNTERS = COUNTERS.map((c) => COUNTER_COLUMNS[c]);

/** SELECT of one scan: rows of (b, the groupBy dimensions, the counters' sums). */
export function scanSql(d: Dialect, p: PlannedUsage, s: RollupScan): { sql: string; params: unknown[] } {
  const params: unknown[] = [s.from, s.to];
  const where = [`bucket >= ${d.param(1)}`, `bucket < ${d.param(2)}`];
  if (!p.includeSandbox) where.push(`sandbox = ${d.notSandbox}`);
  for (const [dim, v] of Object.entries(p.filter)) {
    params.push(v);
    where.push(`${DIMENSION_COLUMNS[dim as UsageDimension]} = ${d.param(params.length)}`);
  }
  const bucket = p.bucket === "none" ? "0" : p.bucket === "day" && s.table === "hour" ? `(bucket / ${DAY_MS}) * ${DAY_MS}` : "bucket";
  const dims = p.groupBy.map((g) => DIMENSION_COLUMNS[g]);
  const select = [`${bucket} AS b`, ...dims.map((c, i) => `${c} AS g${i}`), ...ROLLUP_COUNTERS.map((c) => `SUM(${c}) AS ${c}`)];
  const groupBy = p.bucket === "none" ? dims : [bucket, ...dims];
  const table = s.table === "hour" ? d.hourly : d.daily;
  return {
    sql: `SELECT ${select.join(", ")} FROM ${table} WHERE ${where.join(" AND ")}${groupBy.length ? ` GROUP BY ${groupBy.join(", ")}` : ""}`,
    params,
  };
}

/** A scan row back to (bucket, group, counters); numbers may come as strings or bigints from the driver. */
export function scanRow(p: PlannedUsage, r: Record<string, unknown>): { b: number; group: Partial<Record<UsageDimension, string>>; c: RollupCounts } {
  const group: Partial<Record<UsageDimension, string>> = {};
  p.groupBy.forEach((g, i) => (group[g] = String(r[`g${i}`])));
  const c = {} as RollupCounts;
  for (const k of COUNTERS) {
    const v = r[COUNTER_COLUMNS[k]];
    (c as unknown as Record<string, unknown>)[k] = k === "costPico" ? BigInt(v === null || v === undefined ? 0 : String(v).split(".")[0]!) : Number(v ?? 0);
  }
  return { b: Number(r.b), group, c };
}

/** One page of a search, newest first, one record more than the page (so the caller knows whether one follows). */
export function searchSql(d: Dialect, p: PlannedSearch): { sql: string; params: unknown[] } {
  const q = p.q;
  const params: unknown[] = [];
  const where: string[] = [];
  const eq = (col: string, v: unknown) => {
    params.push(v);
    where.push(`${col} = ${d.param(params.length)}`);
  };
  if (q.generationId !== undefined) eq("generation_id", q.generationId);
  if (q.requestId !== undefined) eq("request_id", q.requestId);
  if (q.project !== undefined) eq("project", q.project);
  if (q.key !== undefined) eq("key_id", q.key);
  if (q.model !== undefined) eq("model", q.model);
  if (q.provider !== undefined) eq("provider", q.provider);
  if (q.endpoint !== undefined) eq("endpoint", q.endpoint);
  if (p.status) {
    params.push(p.status.min, p.status.max);
    where.push(`status BETWEEN ${d.param(params.length - 1)} AND ${d.param(params.length)}`);
  }
  if (q.since !== undefined) {
    params.push(Math.floor(q.since));
    where.push(`ts >= ${d.param(params.length)}`);
  }
  if (q.until !== undefined) {
    params.push(Math.ceil(q.until));
    where.push(`ts < ${d.param(params.length)}`);
  }
  if (p.after) {
    params.push(p.after.ts, p.after.ts, p.after.generationId);
    const n = params.length;
    where.push(`(ts < ${d.param(n - 2)} OR (ts = ${d.param(n - 1)} AND generation_id < ${d.param(n)}))`);
  }
  params.push(p.limit + 1);
  return {
    sql: `SELECT * FROM ${d.raw}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ts DESC, generation_id DESC LIMIT ${d.param(params.length)}`,
    params,
  };
}
