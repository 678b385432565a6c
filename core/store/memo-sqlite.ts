// Memos on SQLite (store kind sqlite): one table, written through the store's group commit (no synchronous write
// per request), read by key, swept with the store's other expired records.
import type Database from "better-sqlite3";
import type { MemoStore } from "./memo-types.ts";

export const MEMO_SCHEMA = `
CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL);
`;

export class SqliteMemoStore implements MemoStore {
  private readonly stmts;

  constructor(db: Database.Database, private readonly enqueue: (write: () => void) => Promise<void>) {
    db.exec(MEMO_SCHEMA);
    this.stmts = {
      put: db.prepare("INSERT OR REPLACE INTO memo (key, value, expires_at) VALUES (?, ?, ?)"),
      get: db.prepare("SELECT value, expires_at FROM memo WHERE key = ?"),
      sweep: db.prepare("DELETE FROM memo WHERE expires_at <= ?"),
    };
  }

  put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    return this.enqueue(() => this.stmts.put.run(key, value, now + ttlMs));
  }

  async get(keys: string[], now: number): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const k of keys) {
      const row = this.stmts.get.get(k) as { value: string; expires_at: number } | undefined;
      if (row && row.expires_at > now) out.set(k, row.value);
    }
    return out;
  }

  sweep(now: number): void {
    this.stmts.sweep.run(now);
  }
}
