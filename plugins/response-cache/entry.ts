// What the cache keeps for one answer: the response as the idempotency records keep it (core/pipeline/stored-response.ts
// replays both), when it was made and when it expires. Stored as JSON text; a value that does not parse as an entry of
// this version is treated as absent.
import type { StoredResponse } from "../../core/store/types.ts";

export interface CacheEntry {
  v: 1;
  /** ms since the epoch. */
  storedAt: number;
  expiresAt: number;
  response: StoredResponse;
  /**
   * The gateway model id that gave the answer (a fallback's, where one did): not replayed once that model is retired
   * whole. Absent in entries kept before it was noted.
   */
  model?: string;
}

export function parseEntry(text: string): CacheEntry | undefined {
  try {
    const e = JSON.parse(text) as CacheEntry;
    return e && e.v === 1 && typeof e.expiresAt === "number" && e.response && typeof e.response === "object" ? e : undefined;
  } catch {
    return undefined;
  }
}
