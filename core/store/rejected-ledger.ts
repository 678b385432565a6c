// Ledger records a store cannot hold, set aside instead of retried: a record whose write fails every time (a cost
// past the 64-bit pico-USD column, a count a Redis HINCRBY refuses) would otherwise keep the spool's replay failing,
// and with it the store marked down for every project, across restarts. They go to `rejected-ledger.jsonl` in the
// spool directory (the file the Postgres ledger writer sets its refused records aside in), fsync'd, one JSON line
// each with the error, for an operator to look at; the replay goes on with the records behind them.
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { LedgerEntry } from "./ledger-entry.ts";
import { makeDirs } from "./make-dirs.ts";

export const REJECTED_FILE = "rejected-ledger.jsonl";

/** The store's record could not be written for what it holds, not for the store's state: retrying cannot help. */
export class UnstorableRecordError extends Error {
  override name = "UnstorableRecordError";
}

const INT64_MAX = 2n ** 63n - 1n;
const COUNTS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "images", "searchUnits", "webSearches"] as const;

/**
 * Why no store can hold this record (every backend's columns and counters are 64-bit integers, SQLite's bound
 * parameters and Redis's HINCRBY alike), or undefined when it can. Negative figures are refused too: they would
 * lower a project's spend. Checked before the write, so a bad record never fails a batch of good ones with it.
 */
export function unstorable(e: LedgerEntry): string | undefined {
  if (typeof e.costPico !== "bigint" || e.costPico < 0n || e.costPico > INT64_MAX) return `cost_pico ${String(e.costPico)} is outside 0..2^63-1`;
  for (const f of COUNTS) {
    const v = e[f];
    if (v === undefined && f === "webSearches") continue;
    if (!Number.isSafeInteger(v) || v! < 0) return `${f} ${String(v)} is not a non-negative safe integer`;
  }
  if (!Number.isFinite(e.videoSeconds) || e.videoSeconds < 0 || e.videoSeconds > Number.MAX_SAFE_INTEGER) return `videoSeconds ${String(e.videoSeconds)} is out of range`;
  return undefined;
}

/** Append one record, with the error, to the rejected file in `dir` (fsync'd before this resolves). */
export async function setAside(dir: string, record: unknown, error: string): Promise<string> {
  const file = join(dir, REJECTED_FILE);
  makeDirs(dir);
  const fh = await open(file, "a");
  try {
    await fh.write(JSON.stringify({ at: new Date().toISOString(), error, record }) + "\n");
    await fh.datasync();
  } finally {
    await fh.close();
  }
  return file;
}
