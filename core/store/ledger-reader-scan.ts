// STOP-GAP LedgerReader: answers by scanning store.ledger() (every record since the range's start, in memory).
// Correct, but its cost grows with the ledger; the rollup-backed reader (per hour × project × key × model ×
// provider × endpoint, and an id index) replaces this file when the ledger branch merges. Nothing else depends on
// how it works: callers see only core/contracts/ledger-reader.ts.
import type { LedgerReader, LedgerRecord, RequestPage, RequestSearch, UsageDimension, UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import { picoToUsd } from "../money/money.ts";
import type { LedgerEntry, Store } from "./types.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const valueOf = (e: LedgerEntry, d: UsageDimension): string =>
  d === "project" ? e.project : d === "key" ? e.keyId : d === "model" ? e.model : d === "provider" ? e.provider : e.endpoint;

function statusMatches(status: number, want: string): boolean {
  const cls = /^([1-5])xx$/i.exec(want);
  return cls ? Math.floor(status / 100) === Number(cls[1]) : String(status) === want;
}

/** Cursor: the (ts, generation id) of the last record of the previous page; the next page starts strictly after it. */
function encodeCursor(e: LedgerEntry): string {
  return Buffer.from(JSON.stringify([e.ts, e.generationId])).toString("base64url");
}

function decodeCursor(c: string): [number, string] | undefined {
  try {
    const v = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    return Array.isArray(v) && typeof v[0] === "number" && typeof v[1] === "string" ? [v[0], v[1]] : undefined;
  } catch {
    return undefined;
  }
}

const newestFirst = (a: LedgerEntry, b: LedgerEntry) => b.ts - a.ts || (a.generationId < b.generationId ? 1 : a.generationId > b.generationId ? -1 : 0);

export class ScanLedgerReader implements LedgerReader {
  constructor(private readonly store: Pick<Store, "ledger">) {}

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const since = Math.floor(q.since / HOUR) * HOUR;
    const until = Math.ceil(q.until / HOUR) * HOUR;
    const rows = new Map<string, UsageRow>();
    for (const e of await this.store.ledger({ since, ...(q.filter?.project ? { project: q.filter.project } : {}) })) {
      if (e.ts < since || e.ts >= until) continue;
      if (e.sandbox && !q.includeSandbox) continue;
      if (q.filter && Object.entries(q.filter).some(([d, v]) => v !== undefined && valueOf(e, d as UsageDimension) !== v)) continue;
      const bucketStart = q.bucket === "hour" ? Math.floor(e.ts / HOUR) * HOUR : q.bucket === "day" ? Math.floor(e.ts / DAY) * DAY : undefined;
      const group: Partial<Record<UsageDimension, string>> = {};
      for (const d of q.groupBy) group[d] = valueOf(e, d);
      const k = JSON.stringify([bucketStart, group]);
      let r = rows.get(k);
      if (!r) {
        r = {
          ...(bucketStart !== undefined ? { bucketStart } : {}), group, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
          cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0", costPico: 0n,
        };
        rows.set(k, r);
      }
      r.requests++;
      if (e.status >= 400 || e.outcome !== "ok") r.errors++;
      r.inputTokens += e.inputTokens;
      r.outputTokens += e.outputTokens;
      r.cacheReadTokens += e.cacheReadTokens;
      r.cacheWriteTokens += e.cacheWriteTokens;
      r.reasoningTokens += e.reasoningTokens;
      r.images += e.images;
      r.videoSeconds += e.videoSeconds;
      r.searchUnits += e.searchUnits;
      r.webSearches += e.webSearches ?? 0;
      r.costPico += e.costPico;
    }
    const out = [...rows.values()];
    for (const r of out) r.costUsd = picoToUsd(r.costPico);
    return out.sort((a, b) => (a.bucketStart ?? 0) - (b.bucketStart ?? 0) || (JSON.stringify(a.group) < JSON.stringify(b.group) ? -1 : 1));
  }

  async search(q: RequestSearch): Promise<RequestPage> {
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const limit = Math.max(1, Math.min(500, q.limit));
    const matches = (await this.store.ledger({ ...(q.project ? { project: q.project } : {}), ...(q.since !== undefined ? { since: q.since } : {}) })).filter((e) =>
      (q.generationId === undefined || e.generationId === q.generationId) &&
      (q.requestId === undefined || e.requestId === q.requestId) &&
      (q.key === undefined || e.keyId === q.key) &&
      (q.model === undefined || e.model === q.model) &&
      (q.provider === undefined || e.provider === q.provider) &&
      (q.endpoint === undefined || e.endpoint === q.endpoint) &&
      (q.status === undefined || statusMatches(e.status, q.status)) &&
      (q.until === undefined || e.ts < q.until) &&
      (!after || e.ts < after[0] || (e.ts === after[0] && e.generationId < after[1])));
    matches.sort(newestFirst);
    const records: LedgerRecord[] = matches.slice(0, limit);
    return { records, ...(matches.length > limit ? { next: encodeCursor(records[records.length - 1]!) } : {}) };
  }

  async get(generationId: string): Promise<LedgerRecord | undefined> {
    return (await this.store.ledger({})).find((e) => e.generationId === generationId);
  }
}
