// Cached answers in the SQLite file (store kind sqlite): one table, written through the store's group commit. The
// byte total is kept in memory (summed once at open) and held under the limit by evicting the least recently used
// rows: a few with each write, the rest by a sweep every minute, which also drops expired rows. Reads do not write:
// the time a row was last used is noted in memory and written by the sweep.
import type Database from "better-sqlite3";
import { DEFAULT_CACHE_MAX_BYTES, type ResponseCacheStore } from "./response-cache-types.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS response_cache (
  key TEXT PRIMARY KEY, value TEXT NOT NULL, bytes INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS response_cache_expires ON response_cache (expires_at);
CREATE INDEX IF NOT EXISTS response_cache_used ON response_cache (used_at);
`;

const SWEEP_EVERY_MS = 60_000;
/** Rows evicted with one write (the sweep takes what is left): a write never holds the event loop long. */
const EVICT_PER_WRITE = 64;
const EVICT_PER_SWEEP = 5_000;
/** Read times kept until the next sweep; past it the oldest reads are forgotten (their rows just look older). */
const MAX_TOUCHED = 50_000;

export class SqliteResponseCacheStore implements ResponseCacheStore {
  private readonly stmts;
  private total: number;
  private maxBytes = DEFAULT_CACHE_MAX_BYTES;
  private readonly touched = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(db: Database.Database, private readonly enqueue: (write: () => void, done?: () => void) => Promise<void>) {
    db.exec(SCHEMA);
    this.stmts = {
      get: db.prepare("SELECT value, expires_at FROM response_cache WHERE key = ?"),
      size: db.prepare("SELECT bytes FROM response_cache WHERE key = ?"),
      put: db.prepare("INSERT OR REPLACE INTO response_cache (key, value, bytes, expires_at, used_at) VALUES (?, ?, ?, ?, ?)"),
      oldest: db.prepare("SELECT key, bytes FROM response_cache ORDER BY used_at LIMIT ?"),
      remove: db.prepare("DELETE FROM response_cache WHERE key = ?"),
      expired: db.prepare("DELETE FROM response_cache WHERE key IN (SELECT key FROM response_cache WHERE expires_at <= ? LIMIT ?) RETURNING bytes"),
      touch: db.prepare("UPDATE response_cache SET used_at = ? WHERE key = ?"),
      total: db.prepare("SELECT COALESCE(SUM(bytes), 0) AS n FROM response_cache"),
    };
    this.total = Number((this.stmts.total.get() as { n: number }).n);
    this.sweeper = setInterval(() => void this.sweep(Date.now()).catch(() => {}), SWEEP_EVERY_MS).unref();
  }

  async get(key: string, now: number): Promise<string | undefined> {
    const row = this.stmts.get.get(key) as { value: string; expires_at: number } | undefined;
    if (!row || row.expires_at <= now) return undefined;
    if (this.touched.size < MAX_TOUCHED || this.touched.has(key)) this.touched.set(key, now);
    return row.value;
  }

  put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    const bytes = Buffer.byteLength(value);
    if (bytes > this.maxBytes) return Promise.resolve();
    let delta = 0;
    return this.enqueue(
      () => {
        delta = 0;
        const old = this.stmts.size.get(key) as { bytes: number } | undefined;
        this.stmts.put.run(key, value, bytes, now + ttlMs, now);
        delta = bytes - (old ? Number(old.bytes) : 0);
        delta -= this.evict(this.total + delta, EVICT_PER_WRITE, key);
      },
      () => { this.total += delta; },
    );
  }

  setMaxBytes(bytes: number): void {
    this.maxBytes = bytes;
  }

  /** Drop expired rows, write the read times, and evict down to the limit; through the group commit. */
  sweep(now: number): Promise<void> {
    const touched = [...this.touched];
    this.touched.clear();
    let delta = 0;
    return this.enqueue(
      () => {
        delta = 0;
        for (const [key, at] of touched) this.stmts.touch.run(at, key);
        for (const r of this.stmts.expired.all(now, EVICT_PER_SWEEP) as { bytes: number }[]) delta -= Number(r.bytes);
        delta -= this.evict(this.total + delta, EVICT_PER_SWEEP);
      },
      () => { this.total += delta; },
    );
  }

  /** Inside a write: delete least recently used rows (never `keep`) while `total` is over the limit; bytes freed. */
  private evict(total: number, most: number, keep?: string): number {
    if (total <= this.maxBytes) return 0;
    let freed = 0;
    for (const r of this.stmts.oldest.all(most) as { key: string; bytes: number }[]) {
      if (total - freed <= this.maxBytes) break;
      // Read since the last sweep (its used_at not yet written): not the least recently used after all.
      if (r.key === keep || this.touched.has(r.key)) continue;
      this.stmts.remove.run(r.key);
      freed += Number(r.bytes);
    }
    return freed;
  }

  /** The bytes of answers held now (for tests and the operator). */
  get bytes(): number {
    return this.total;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
