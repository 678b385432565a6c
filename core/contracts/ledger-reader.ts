// What the operator plane (admin API, CLI `usage`, console) asks of the usage ledger. Every store answers these
// from rollups kept current as records land (per hour × project × key × model × provider × endpoint), never by
// scanning raw records; a request's own record is found by its ids through an index.
import type { LedgerEntry } from "../store/ledger-entry.ts";

/** A dimension usage can be grouped and filtered by. */
export type UsageDimension = "project" | "key" | "model" | "provider" | "endpoint";

/** Time buckets of a usage answer; "none" sums the whole range. */
export type UsageBucket = "hour" | "day" | "none";

export interface UsageQuery {
  /** ms since the epoch, inclusive; rounded down to the hour. */
  since: number;
  /** ms since the epoch, exclusive; rounded up to the hour. */
  until: number;
  /** With key (or a key filter without a project), rows are grouped by project too: a key id names one key per project. */
  groupBy: UsageDimension[];
  bucket: UsageBucket;
  /** Only records matching every given value. */
  filter?: Partial<Record<UsageDimension, string>>;
  /** Sandbox (mg_test_) records too; default false. */
  includeSandbox?: boolean;
}

/** One group (and bucket) of a usage answer. Money is exact: a decimal string and integer pico-USD. */
export interface UsageRow {
  /** Start of the bucket, ms since the epoch (absent when bucket is "none"). */
  bucketStart?: number;
  /** The grouped dimensions' values (only those in groupBy). */
  group: Partial<Record<UsageDimension, string>>;
  requests: number;
  /** Records whose status is >= 400 or whose outcome is not "ok". */
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  images: number;
  videoSeconds: number;
  searchUnits: number;
  webSearches: number;
  costUsd: string;
  costPico: bigint;
}

export interface RequestSearch {
  generationId?: string;
  requestId?: string;
  project?: string;
  key?: string;
  model?: string;
  provider?: string;
  endpoint?: string;
  /** An HTTP status, or a class: "2xx", "4xx", "5xx". */
  status?: string;
  since?: number;
  until?: number;
  /** Page size (at most 500). */
  limit: number;
  /** Opaque cursor from the previous page's `next`. */
  cursor?: string;
}

/** One attempt of a request: the fallback chain as dispatch walked it. */
export interface LedgerAttempt {
  model: string;
  provider: string;
  status: number;
  latencyMs: number;
  /** The gateway's error code when the attempt failed. */
  error?: string;
}

/** A ledger record with the attempts that led to it. */
export interface LedgerRecord extends LedgerEntry {
  attemptList?: LedgerAttempt[];
}

export interface RequestPage {
  /** Newest first. */
  records: LedgerRecord[];
  next?: string;
}

export interface LedgerReader {
  usage(q: UsageQuery): Promise<UsageRow[]>;
  search(q: RequestSearch): Promise<RequestPage>;
  get(generationId: string): Promise<LedgerRecord | undefined>;
}
