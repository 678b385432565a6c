// Usage rollups, the same on every store: per hour and per day (UTC) × project × key × model × provider × endpoint
// × sandbox, the sums of the ledger records that landed there. Kept current as records land (in the transaction or
// script that writes the record, so a record is counted once or not at all), and read instead of the records:
// a usage question costs the number of groups, not the number of requests.
import type { LedgerEntry } from "./types.ts";
import type { UsageDimension, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import { picoToUsd } from "../money/money.ts";
import { GatewayError } from "../errors.ts";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const DIMENSIONS: readonly UsageDimension[] = ["project", "key", "model", "provider", "endpoint"];

/** The sums a rollup keeps per group and bucket: a usage row's counters. */
export type RollupCounts = Omit<UsageRow, "bucketStart" | "group" | "costUsd">;

/** Counter names in the order SQL columns and Redis fields use them (costPico last: the one bigint). */
export const COUNTERS = [
  "requests", "errors", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "images",
  "videoSeconds", "searchUnits", "webSearches", "costPico",
] as const;

/** SQL column of each counter (SQLite and Postgres use the same names). */
export const COUNTER_COLUMNS: Record<(typeof COUNTERS)[number], string> = {
  requests: "requests", errors: "errors", inputTokens: "input_tokens", outputTokens: "output_tokens", cacheReadTokens: "cache_read_tokens",
  cacheWriteTokens: "cache_write_tokens", reasoningTokens: "reasoning_tokens", images: "images", videoSeconds: "video_seconds",
  searchUnits: "search_units", webSearches: "web_searches", costPico: "cost_pico",
};

/** SQL column of each dimension in the rollup tables and the raw ledger. */
export const DIMENSION_COLUMNS: Record<UsageDimension, string> = { project: "project", key: "key_id", model: "model", provider: "provider", endpoint: "endpoint" };

export const zeroCounts = (): RollupCounts => ({
  requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, webSearches: 0, costPico: 0n,
});

/** A record is an error when its status is >= 400 or its outcome is not "ok" (a stream cut off, a client gone). */
export const isError = (e: Pick<LedgerEntry, "status" | "outcome">): boolean => e.status >= 400 || e.outcome !== "ok";

/** What one record adds to its groups. */
export function countsOf(e: LedgerEntry): RollupCounts {
  return {
    requests: 1, errors: isError(e) ? 1 : 0, inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: e.cacheReadTokens,
    cacheWriteTokens: e.cacheWriteTokens, reasoningTokens: e.reasoningTokens, images: e.images, videoSeconds: e.videoSeconds,
    searchUnits: e.searchUnits, webSearches: e.webSearches ?? 0, costPico: e.costPico,
  };
}

export function addCounts(into: RollupCounts, c: RollupCounts): void {
  into.requests += c.requests;
  into.errors += c.errors;
  into.inputTokens += c.inputTokens;
  into.outputTokens += c.outputTokens;
  into.cacheReadTokens += c.cacheReadTokens;
  into.cacheWriteTokens += c.cacheWriteTokens;
  into.reasoningTokens += c.reasoningTokens;
  into.images += c.images;
  into.videoSeconds += c.videoSeconds;
  into.searchUnits += c.searchUnits;
  into.webSearches += c.webSearches;
  into.costPico += c.costPico;
}

export const hourOf = (ts: number): number => Math.floor(ts / HOUR_MS) * HOUR_MS;
export const dayOf = (ts: number): number => Math.floor(ts / DAY_MS) * DAY_MS;

/** The group a record is counted in: its dimensions and whether it is sandbox traffic. */
export interface RollupGroup {
  project: string;
  key: string;
  model: string;
  provider: string;
  endpoint: string;
  sandbox: boolean;
}

export const groupOf = (e: LedgerEntry): RollupGroup => ({
  project: e.project, key: e.keyId, model: e.model, provider: e.provider, endpoint: e.endpoint, sandbox: e.sandbox,
});

/** One slice of a usage answer read from one rollup table: the store sums the counters per (bucket, group). */
export interface RollupScan {
  table: "hour" | "day";
  /** ms, inclusive, aligned to the table's bucket. */
  from: number;
  /** ms, exclusive, aligned to the table's bucket. */
  to: number;
}

/** A query checked and rounded to whole hours. */
export interface PlannedUsage {
  since: number;
  until: number;
  groupBy: UsageDimension[];
  bucket: UsageQuery["bucket"];
  filter: Partial<Record<UsageDimension, string>>;
  includeSandbox: boolean;
  scans: RollupScan[];
}

/** A query the reader cannot answer as asked: 400 INVALID_REQUEST naming the field (the admin API passes it on). */
export const invalidQuery = (field: string, message: string): GatewayError =>
  new GatewayError(400, "INVALID_REQUEST", message, { details: { field } });

/**
 * The dimensions a usage answer is grouped by. A key id names one key per project, so grouping by key groups by
 * (project, key), and a key filter without a project answers per project: two projects' keys with one id are never
 * summed into one row, and every row naming a key names its project.
 */
export function usageGroupBy(groupBy: readonly UsageDimension[], filter: UsageQuery["filter"] = {}): UsageDimension[] {
  const dims = [...new Set(groupBy)];
  const perProject = dims.includes("key") || (filter.key !== undefined && filter.project === undefined);
  if (!perProject || dims.includes("project")) return dims;
  const at = Math.max(0, dims.indexOf("key"));
  return [...dims.slice(0, at), "project", ...dims.slice(at)];
}

/**
 * Check a usage query and decide which rollups answer it: whole days from the daily rollup, the hours before the
 * first and after the last whole day from the hourly one (hourly buckets read the hourly rollup throughout).
 */
export function planUsage(q: UsageQuery): PlannedUsage {
  if (!Number.isFinite(q.since)) throw invalidQuery("since", "since must be a time in ms since the epoch");
  if (!Number.isFinite(q.until)) throw invalidQuery("until", "until must be a time in ms since the epoch");
  if (!["hour", "day", "none"].includes(q.bucket)) throw invalidQuery("bucket", `bucket must be hour, day or none, not ${String(q.bucket)}`);
  const groupBy = [...new Set(q.groupBy ?? [])];
  for (const d of groupBy) if (!DIMENSIONS.includes(d)) throw invalidQuery("groupBy", `cannot group by ${String(d)}: one of ${DIMENSIONS.join(", ")}`);
  const filter: Partial<Record<UsageDimension, string>> = {};
  for (const [d, v] of Object.entries(q.filter ?? {})) {
    if (!DIMENSIONS.includes(d as UsageDimension)) throw invalidQuery("filter", `cannot filter by ${d}: one of ${DIMENSIONS.join(", ")}`);
    if (v !== undefined) filter[d as UsageDimension] = String(v);
  }
  const grouped = usageGroupBy(groupBy, filter);
  const since = hourOf(Math.max(0, q.since));
  const until = Math.ceil(Math.max(0, q.until) / HOUR_MS) * HOUR_MS;
  const scans: RollupScan[] = [];
  if (until > since) {
    const firstDay = Math.ceil(since / DAY_MS) * DAY_MS;
    const lastDay = dayOf(until);
    if (q.bucket === "hour" || firstDay >= lastDay) scans.push({ table: "hour", from: since, to: until });
    else {
      if (since < firstDay) scans.push({ table: "hour", from: since, to: firstDay });
      scans.push({ table: "day", from: firstDay, to: lastDay });
      if (lastDay < until) scans.push({ table: "hour", from: lastDay, to: until });
    }
  }
  return { since, until, groupBy: grouped, bucket: q.bucket, filter, includeSandbox: q.includeSandbox === true, scans };
}

/** A bucket start as a scan row carries it, mapped to the answer's bucket. */
export function bucketOf(p: PlannedUsage, bucketStart: number): number | undefined {
  if (p.bucket === "none") return undefined;
  return p.bucket === "day" ? dayOf(bucketStart) : bucketStart;
}

/** Sums scan rows (from any number of scans) into the answer's rows, ordered by bucket, then group. */
export class UsageAccumulator {
  private readonly rows = new Map<string, { bucketStart?: number; group: Partial<Record<UsageDimension, string>>; c: RollupCounts }>();

  constructor(private readonly p: PlannedUsage) {}

  /** `bucketStart`: the scanned row's hour or day; `group`: its values of the query's groupBy dimensions. */
  add(bucketStart: number, group: Partial<Record<UsageDimension, string>>, c: RollupCounts): void {
    const b = bucketOf(this.p, bucketStart);
    const values = this.p.groupBy.map((d) => group[d] ?? "");
    const k = `${b ?? ""}\u0000${values.join("\u0000")}`;
    let row = this.rows.get(k);
    if (!row) {
      const g: Partial<Record<UsageDimension, string>> = {};
      this.p.groupBy.forEach((d, i) => (g[d] = values[i]));
      this.rows.set(k, (row = { ...(b === undefined ? {} : { bucketStart: b }), group: g, c: zeroCounts() }));
    }
    addCounts(row.c, c);
  }

  result(): UsageRow[] {
    const out = [...this.rows.values()].map(({ bucketStart, group, c }): UsageRow => ({
      ...(bucketStart === undefined ? {} : { bucketStart }),
      group,
      requests: c.requests, errors: c.errors, inputTokens: c.inputTokens, outputTokens: c.outputTokens, cacheReadTokens: c.cacheReadTokens,
      cacheWriteTokens: c.cacheWriteTokens, reasoningTokens: c.reasoningTokens, images: c.images, videoSeconds: roundSeconds(c.videoSeconds),
      searchUnits: c.searchUnits, webSearches: c.webSearches, costUsd: picoToUsd(c.costPico), costPico: c.costPico,
    }));
    const groupKey = (r: UsageRow) => this.p.groupBy.map((d) => r.group[d] ?? "").join("\u0000");
    return out.sort((a, b) => (a.bucketStart ?? 0) - (b.bucketStart ?? 0) || (groupKey(a) < groupKey(b) ? -1 : groupKey(a) > groupKey(b) ? 1 : 0));
  }
}

/** Video seconds are summed as doubles: keep the answer free of float noise (0.30000000000000004). */
const roundSeconds = (s: number) => Math.round(s * 1e6) / 1e6;

/** Does a rollup group pass the query's filter and sandbox choice? */
export function groupMatches(p: PlannedUsage, g: RollupGroup): boolean {
  if (g.sandbox && !p.includeSandbox) return false;
  for (const [d, v] of Object.entries(p.filter)) if (g[d as UsageDimension] !== v) return false;
  return true;
}
