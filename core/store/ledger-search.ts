// Request search, the same on every store: filters checked once, newest first, paged by an opaque cursor naming the
// last record returned (its time and generation id), so a page never repeats or skips a record while new ones land.
import type { LedgerRecord, RequestSearch } from "../contracts/ledger-reader.ts";
import { invalidQuery } from "./rollup.ts";

export const MAX_PAGE = 500;

/** Where a page ends: records strictly older than (ts, generationId) come next. */
export interface SearchCursor {
  ts: number;
  generationId: string;
}

/** A search checked: the page size, the status filter as a range, the cursor decoded. */
export interface PlannedSearch {
  q: RequestSearch;
  limit: number;
  /** Inclusive status range ("4xx" -> 400..499, "404" -> 404..404). */
  status?: { min: number; max: number };
  after?: SearchCursor;
}

export function encodeCursor(c: SearchCursor): string {
  return Buffer.from(`${c.ts}:${c.generationId}`).toString("base64url");
}

export function planSearch(q: RequestSearch): PlannedSearch {
  const limit = Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw invalidQuery("limit", `limit must be a whole number from 1 to ${MAX_PAGE}`);
  let status: PlannedSearch["status"];
  if (q.status !== undefined) {
    const s = String(q.status).toLowerCase();
    const cls = /^([1-5])xx$/.exec(s);
    if (cls) status = { min: Number(cls[1]) * 100, max: Number(cls[1]) * 100 + 99 };
    else if (/^[1-5]\d\d$/.test(s)) status = { min: Number(s), max: Number(s) };
    else throw invalidQuery("status", `status must be an HTTP status (404) or a class (2xx, 4xx, 5xx), not ${q.status}`);
  }
  for (const f of ["since", "until"] as const) {
    if (q[f] !== undefined && !Number.isFinite(q[f])) throw invalidQuery(f, `${f} must be a time in ms since the epoch`);
  }
  let after: SearchCursor | undefined;
  if (q.cursor !== undefined) {
    const m = /^(\d{1,16}):(.+)$/s.exec(Buffer.from(String(q.cursor), "base64url").toString("utf8"));
    if (!m) throw invalidQuery("cursor", "cursor is not one this gateway returned (pass `next` of the previous page unchanged)");
    after = { ts: Number(m[1]), generationId: m[2]! };
  }
  return { q, limit, status, after };
}

/** Does a record pass every filter of the search (stores that cannot filter in their query use this)? */
export function recordMatches(p: PlannedSearch, r: LedgerRecord): boolean {
  const q = p.q;
  if (q.generationId !== undefined && r.generationId !== q.generationId) return false;
  if (q.requestId !== undefined && r.requestId !== q.requestId) return false;
  if (q.project !== undefined && r.project !== q.project) return false;
  if (q.key !== undefined && r.keyId !== q.key) return false;
  if (q.model !== undefined && r.model !== q.model) return false;
  if (q.provider !== undefined && r.provider !== q.provider) return false;
  if (q.endpoint !== undefined && r.endpoint !== q.endpoint) return false;
  if (p.status && (r.status < p.status.min || r.status > p.status.max)) return false;
  if (q.since !== undefined && r.ts < q.since) return false;
  if (q.until !== undefined && r.ts >= q.until) return false;
  return !p.after || isOlder(r, p.after);
}

/** Newest first: by time, then by generation id (both descending). */
export const isOlder = (r: SearchCursor, than: SearchCursor): boolean =>
  r.ts < than.ts || (r.ts === than.ts && r.generationId < than.generationId);

export const newestFirst = (a: SearchCursor, b: SearchCursor): number =>
  b.ts - a.ts || (a.generationId < b.generationId ? 1 : a.generationId > b.generationId ? -1 : 0);

/** A page from up to limit + 1 matching records, newest first: the extra one says there is a next page. */
export function pageOf(p: PlannedSearch, newest: LedgerRecord[]): { records: LedgerRecord[]; next?: string } {
  const records = newest.slice(0, p.limit);
  const last = records[records.length - 1];
  return newest.length > p.limit && last ? { records, next: encodeCursor(last) } : { records };
}
