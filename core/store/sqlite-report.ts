// `model-gateway usage` on a SQLite file. The file may be served by a gateway meanwhile — this release, or an older
// one — and the command must not migrate it under that gateway (the layout is the serving process's business):
// when no gateway holds the file's serving lock it is opened as a gateway would open it, migrations included, under
// that lock (let go as soon as it is open, so a gateway may start while the report runs); when one holds it, the
// file is only read (a read-only connection, one snapshot): the rollups, plus the records still in the journal.
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SqliteStore, fromRow, sqliteSchemaVersion } from "./sqlite.ts";
import { holdServingLock } from "./sqlite-process-lock.ts";
import { SQLITE, scanRow, scanSql } from "./ledger-sql.ts";
import { UsageAccumulator, countsOf, dayOf, groupMatches, groupOf, hourOf, planUsage } from "./rollup.ts";
import type { UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";

export interface UsageSource {
  usage(q: UsageQuery): Promise<UsageRow[]>;
  close(): Promise<void>;
}

/** The usage reader of the SQLite file at `path` (absolute; made, empty, when there is none yet, as a gateway would). */
export function openSqliteForReport(path: string, busyTimeoutMs: number): UsageSource {
  if (path === ":memory:") return { usage: async () => [], close: async () => {} };
  let lock: { release(): void } | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    lock = holdServingLock(path);
  } catch {
    // Served (or the lock file cannot be made here): read it as it is.
    return new ServedSqliteReport(path, busyTimeoutMs);
  }
  try {
    // After the open's own journal move the store writes nothing more (it moves only what it journaled itself).
    return new SqliteStore(path, { busyTimeoutMs, fsync: false });
  } finally {
    lock.release();
  }
}

/** A file a gateway serves, read only: never created, migrated or written to. */
export class ServedSqliteReport implements UsageSource {
  private readonly db: Database.Database;

  constructor(private readonly path: string, busyTimeoutMs: number) {
    this.db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    try {
      sqliteSchemaVersion(this.db, path);
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  private has(table: string): boolean {
    return this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const p = planUsage(q);
    if (!this.has("ledger_hourly")) {
      throw new Error(`the gateway serving ${this.path} is a release without usage rollups: upgrade it (its first start adds them), then ask again`);
    }
    const acc = new UsageAccumulator(p);
    const journal = this.has("ledger_journal") ? this.db.prepare("SELECT * FROM ledger_journal WHERE ts >= ? AND ts < ?").safeIntegers(true) : undefined;
    // One snapshot: a record the gateway moves from the journal into the rollups meanwhile is counted once.
    this.db.transaction(() => {
      for (const scan of p.scans) {
        const { sql, params } = scanSql(SQLITE, p, scan);
        for (const r of this.db.prepare(sql).safeIntegers(true).all(...params) as Record<string, unknown>[]) {
          const { b, group, c } = scanRow(p, r);
          acc.add(b, group, c);
        }
        // Records not moved into the ledger yet (the gateway moves them within ~0.1 s): not in the rollups.
        for (const row of journal?.all(scan.from, scan.to) ?? []) {
          const e = fromRow(row);
          const g = groupOf(e);
          if (groupMatches(p, g)) acc.add(scan.table === "hour" ? hourOf(e.ts) : dayOf(e.ts), g, countsOf(e));
        }
      }
    })();
    return acc.result();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
