// `model-gateway usage [--config F] [--project P] [--since 2026-11-01 | 7d | 24h] [--until ...] [--group-by project,model]
// [--bucket none|day|hour] [--sandbox] [--json]`: requests, errors, tokens and cost from the usage rollups of the
// configured ledger (SQLite file, Redis, or Postgres with store.ledger) — never a scan of the records. The rollups are
// hourly, so the range is whole hours: a widened one is said on stderr, or with --json carried by each row (since/until).
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import Big from "big.js";
import { loadConfig } from "../config/load.ts";
import { ConfigError, formatProblem } from "../config/source.ts";
import { createStore, DEFAULT_SQLITE_PATH, sqlitePathOf } from "./index.ts";
import { openSqliteForReport } from "./sqlite-report.ts";
import { settleWithin } from "../deadline.ts";
import { parseStrictTime } from "../strict-time.ts";
import { DIMENSIONS, UsageAccumulator, planUsage, usageGroupBy, type RollupCounts } from "./rollup.ts";
import type { UsageBucket, UsageDimension, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";

/** A row as the command prints it (JSON): the group's dimensions flattened beside the sums, money as decimals. */
export interface PrintedRow {
  bucket?: string;
  project?: string;
  key?: string;
  model?: string;
  provider?: string;
  endpoint?: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costUsd: string;
  /**
   * The range summed (--json), whole hours: the rollups the ledger is read from are hourly. Last, so a script that
   * reads the fields by position still finds the earlier ones where they were.
   */
  since?: string;
  until?: string;
}

/** "2026-11-01", an ISO timestamp (UTC without an offset), or a relative "30m", "24h", "7d" -> ms since the epoch. */
export function parseSince(s: string, now = Date.now(), flag = "--since"): number {
  const rel = /^(\d+)([mhdw])$/.exec(s.trim());
  if (rel) return now - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as "m" | "h" | "d" | "w"];
  const t = parseStrictTime(s);
  if (!t.ok) throw new Error(`${flag} ${s}: ${t.why === "not an ISO 8601 date or time" ? "expected a date (2026-11-01), a timestamp (UTC unless it has an offset), or 30m / 24h / 7d" : t.why}`);
  return t.ms;
}

/**
 * --since and --until as a range; a reversed or empty one is refused (its sums would be an all-zero table that looks
 * like "no traffic"). Absent: from the first record, to an hour from now.
 */
export function parseRange(sinceArg: string | undefined, untilArg: string | undefined, now = Date.now()): { since: number; until: number } {
  const since = sinceArg ? parseSince(sinceArg, now) : 0;
  const until = untilArg ? parseSince(untilArg, now, "--until") : now + 3_600_000;
  if (since >= until) {
    const iso = (t: number) => new Date(t).toISOString();
    const untilText = untilArg ? `--until ${untilArg} (${iso(until)})` : `the default --until, an hour from now (${iso(until)})`;
    const sinceText = sinceArg ? `--since ${sinceArg} (${iso(since)})` : "the first record";
    throw new Error(`${sinceText} is not before ${untilText}: the range is empty`);
  }
  return { since, until };
}

/**
 * The range the rollups actually sum for --since/--until: widened to whole hours (the ledger is read from hourly
 * rollups, rollup.ts planUsage), so `--since 30m` at 12:40 sums from 12:00.
 */
export function summedRange(since: number, until: number): { since: number; until: number } {
  const plan = planUsage({ since, until, bucket: "none", groupBy: [] });
  return { since: plan.since, until: plan.until };
}

/**
 * The stderr line saying the range summed, when a --since or --until given was widened to whole hours (a silent
 * widening over-counts by up to an hour against, say, Prometheus' increase() over the same 30m). Undefined otherwise.
 */
export function widenedNote(given: { since?: string; until?: string }, asked: { since: number; until: number }, summed: { since: number; until: number }): string | undefined {
  const widened = (given.since !== undefined && summed.since !== asked.since) || (given.until !== undefined && summed.until !== asked.until);
  if (!widened) return undefined;
  const iso = (t: number) => new Date(t).toISOString();
  return `usage: summing whole hours, ${iso(summed.since)} to ${iso(summed.until)} (the ledger's usage is kept per hour; asked for ${iso(asked.since)} to ${iso(asked.until)})\n`;
}

/** Longest wait for one store call of the command: long enough for a large range of rollups, never unbounded. */
const USAGE_TIMEOUT_MS = 15_000;

/** MCP tool calls (core/mcp/tool-call.ts) are rows of their own, named `mcp:server/tool`. */
const TOOL_CALLS = new Set(["mcp_tool", "responses_mcp_tool"]);

/** What to ask the reader for: grouped by model, also by endpoint and provider, to name the tool calls. */
export function queriedDimensions(groupBy: UsageDimension[]): UsageDimension[] {
  return groupBy.includes("model") ? [...new Set<UsageDimension>([...groupBy, "endpoint", "provider"])] : groupBy;
}

/** The reader's rows (grouped by queriedDimensions) back to `groupBy`, a tool call's model named `mcp:server/tool`. */
export function nameToolCalls(rows: UsageRow[], q: Omit<UsageQuery, "groupBy">, groupBy: UsageDimension[]): UsageRow[] {
  const acc = new UsageAccumulator(planUsage({ ...q, groupBy }));
  for (const r of rows) {
    const g = r.group;
    const model = g.model !== undefined && TOOL_CALLS.has(g.endpoint ?? "") ? `mcp:${g.provider}/${g.model}` : g.model;
    const counts: RollupCounts = {
      requests: r.requests, errors: r.errors, inputTokens: r.inputTokens, outputTokens: r.outputTokens, cacheReadTokens: r.cacheReadTokens,
      cacheWriteTokens: r.cacheWriteTokens, reasoningTokens: r.reasoningTokens, images: r.images, videoSeconds: r.videoSeconds,
      searchUnits: r.searchUnits, webSearches: r.webSearches, costPico: r.costPico,
    };
    acc.add(r.bucketStart ?? 0, { ...g, ...(model === undefined ? {} : { model }) }, counts);
  }
  return acc.result();
}

/** A reader's row as printed: its bucket as an ISO time, its dimensions flattened. */
export function printedRow(r: UsageRow): PrintedRow {
  return {
    ...(r.bucketStart === undefined ? {} : { bucket: new Date(r.bucketStart).toISOString() }),
    ...r.group,
    requests: r.requests, errors: r.errors, inputTokens: r.inputTokens, outputTokens: r.outputTokens, cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens, reasoningTokens: r.reasoningTokens, costUsd: r.costUsd,
  };
}

/** The reader's rows as printed. */
export function printable(rows: UsageRow[]): PrintedRow[] {
  return rows.map(printedRow);
}

/**
 * Rows as printed, made one at a time as they are written (a big ledger's report is never held as a second copy);
 * with `range`, each names the range summed (--json).
 */
function* printedRows(rows: readonly UsageRow[], range?: { since: number; until: number }): Generator<PrintedRow> {
  const named = range ? { since: new Date(range.since).toISOString(), until: new Date(range.until).toISOString() } : {};
  for (const r of rows) yield { ...printedRow(r), ...named };
}

/**
 * The table, line by line. `rows` is called twice: once for the column widths and the totals, once for the lines;
 * nothing is held meanwhile but one row's cells. (A spread of every row's width into Math.max overflowed the stack at
 * ~120,000 rows: a month of hourly buckets by key and model.)
 */
export function* tableLines(rows: () => Iterable<PrintedRow>, groupBy: UsageDimension[], bucketed: boolean): Generator<string> {
  const dims: string[] = [...(bucketed ? ["bucket"] : []), ...groupBy];
  const head = [...dims, "requests", "errors", "input", "output", "cache_read", "cache_write", "cost_usd"];
  const cell = (r: PrintedRow, d: string) => String((r as unknown as Record<string, unknown>)[d] ?? "");
  const cells = (r: PrintedRow) => [...dims.map((d) => cell(r, d)), r.requests, r.errors, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.costUsd].map(String);
  const widths = head.map((h) => h.length);
  const widen = (row: string[]) => row.forEach((c, i) => (widths[i] = Math.max(widths[i]!, c.length)));
  let requests = 0, errors = 0, cost = new Big(0);
  for (const r of rows()) {
    widen(cells(r));
    requests += r.requests;
    errors += r.errors;
    cost = cost.plus(r.costUsd);
  }
  const total = ["total", ...dims.slice(1).map(() => ""), String(requests), String(errors), "", "", "", "", cost.toFixed()];
  if (!dims.length) total.shift();
  widen(total);
  const line = (row: string[]) => row.map((c, i) => (i < dims.length ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd() + "\n";
  yield line(head);
  for (const r of rows()) yield line(cells(r));
  yield line(total);
}

export function table(rows: PrintedRow[], groupBy: UsageDimension[], bucketed: boolean): string {
  return [...tableLines(() => rows, groupBy, bucketed)].join("");
}

/** `JSON.stringify(rows, null, 2)` and a newline, a row at a time. */
export function* jsonLines(rows: Iterable<PrintedRow>): Generator<string> {
  let first = true;
  for (const r of rows) {
    // A row's strings are escaped JSON (no raw newline in them): indenting every line indents the row.
    yield `${first ? "[\n" : ",\n"}  ${JSON.stringify(r, null, 2).replaceAll("\n", "\n  ")}`;
    first = false;
  }
  yield first ? "[]\n" : "\n]\n";
}

/** Writes `parts` to stdout in chunks of about 64 KB, waiting for a pipe's reader to keep up. */
async function writeOut(parts: Iterable<string>): Promise<void> {
  let chunk = "";
  const flush = async () => {
    const text = chunk;
    chunk = "";
    if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", resolve));
  };
  for (const part of parts) {
    chunk += part;
    if (chunk.length >= 64 * 1024) await flush();
  }
  if (chunk) await flush();
}

/** Where a SQLite store's path came from, for the error naming a file that is not there. */
function sqlitePathOrigin(written: string | undefined, file: string): string {
  if (written === undefined) return `store.path not set in ${file}: the default ${DEFAULT_SQLITE_PATH}, relative to its directory`;
  return isAbsolute(written) || written === ":memory:" ? `store.path in ${file}` : `store.path "${written}" in ${file}, relative to its directory`;
}

/** --config, else ./gateway.yaml when there is one — never the package's own default, whose ledger is not the operator's. */
function configFile(given: string | undefined): string | undefined {
  if (given !== undefined) return given;
  const local = resolve("gateway.yaml");
  return existsSync(local) ? local : undefined;
}

export async function usageCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: "string", short: "c" }, project: { type: "string", short: "p" }, since: { type: "string" }, until: { type: "string" },
      "group-by": { type: "string" }, bucket: { type: "string" }, sandbox: { type: "boolean" }, json: { type: "boolean" },
    },
  });
  let since: number, until: number, groupBy: UsageDimension[], bucket: UsageBucket;
  try {
    ({ since, until } = parseRange(values.since, values.until));
    groupBy = (values["group-by"] ?? "project,model").split(",").map((d) => d.trim()).filter(Boolean) as UsageDimension[];
    const bad = groupBy.find((d) => !DIMENSIONS.includes(d));
    if (bad) throw new Error(`--group-by ${bad}: one of ${DIMENSIONS.join(", ")}`);
    groupBy = usageGroupBy(groupBy); // by key is by project and key: the table names each key's project
    bucket = (values.bucket ?? "none") as UsageBucket;
    if (!["hour", "day", "none"].includes(bucket)) throw new Error(`--bucket ${values.bucket}: hour, day or none`);
  } catch (err) {
    // A bad option value is a usage error (exit 2), like an unknown option.
    process.stderr.write(`usage: ${(err as Error).message}\n`);
    return 2;
  }
  const file = configFile(values.config);
  if (file === undefined) {
    process.stderr.write("usage: no gateway.yaml here; pass --config FILE\n");
    return 1;
  }
  let config;
  try {
    config = await loadConfig(file, { onNotice: () => {} });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${file} has problems\n${err.problems.map(formatProblem).join("\n")}\n`);
      return 1;
    }
    throw err;
  }
  if (config.store.kind === "memory") {
    process.stderr.write(`usage: ${file} uses store kind memory; its ledger lives only inside the running gateway\n`);
    return 1;
  }
  let store;
  try {
    // Bounded like every store wait: a store that stops answering (a paused Redis) fails the command, not hangs it.
    // A SQLite file a gateway serves is only read, never migrated under it (sqlite-report.ts).
    store = config.store.kind === "sqlite"
      ? openSqliteForReport(sqlitePathOf(config.store, config.dir), USAGE_TIMEOUT_MS, sqlitePathOrigin(config.store.path, file))
      : await createStore(config.store, config.dir, file, { timeoutMs: USAGE_TIMEOUT_MS });
  } catch (err) {
    process.stderr.write(err instanceof ConfigError ? `${err.problems.map(formatProblem).join("\n")}\n` : `usage: ${(err as Error).message}\n`);
    return 1;
  }
  const q = { since, until, bucket, includeSandbox: values.sandbox === true, ...(values.project ? { filter: { project: values.project } } : {}) };
  let read;
  try {
    read = await store.usage({ ...q, groupBy: queriedDimensions(groupBy) });
  } catch (err) {
    process.stderr.write(`usage: reading the ledger (store ${config.store.kind}) failed: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await settleWithin(store.close().catch(() => {}), USAGE_TIMEOUT_MS, () => undefined);
  }
  // Not the store's failure when it goes wrong here: said as the command's own.
  try {
    const rows = nameToolCalls(read, q, groupBy);
    read = undefined; // the reader's rows are summed into `rows`: let them go before the output is made
    const summed = summedRange(since, until);
    // With --json the rows carry the range: stderr stays quiet for scripts that read it (2>&1 | jq) or fail on it.
    const note = values.json ? undefined : widenedNote(values, { since, until }, summed);
    if (note) process.stderr.write(note);
    await writeOut(values.json ? jsonLines(printedRows(rows, summed)) : tableLines(() => printedRows(rows), groupBy, bucket !== "none"));
    return 0;
  } catch (err) {
    process.stderr.write(`usage: printing the report failed: ${(err as Error).message}\n`);
    return 1;
  }
}
