// Answers the response cache keeps (plugins/response-cache): an opaque value (the cached answer as JSON text) under
// a key (a hash naming project, endpoint and every field that changes the answer), each until its own expiry. The
// backends bound what they hold: an entry's size is the writer's to cap; the total is capped by every backend (SQLite
// and memory: least recently used first; Redis: closest to expiry first).

export interface ResponseCacheStore {
  /** The live value under `key`, or undefined (never kept, expired or evicted). */
  get(key: string, now: number): Promise<string | undefined>;
  /** Keep `value` under `key` for `ttlMs` (replacing what was there). */
  put(key: string, value: string, ttlMs: number, now: number): Promise<void>;
  /** The most bytes of values to hold in all (cache.max_bytes; follows a reload). */
  setMaxBytes(bytes: number): void;
}

/** Until a config sets it. */
export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
