// A SQLite file opened by a command that only reads it (`usage`, `check`, `keys --config`), served by a gateway or
// not: never created, migrated or written to. A write there (an ALTER, a rollup rebuild, the schema stamp) would take
// the file's write lock from under a serving gateway, whose requests then wait on it and fail 503 STORE_UNAVAILABLE;
// and migrating a file nobody serves needs its serving lock, which would refuse a gateway starting meanwhile.
import Database from "better-sqlite3";
import { sqliteSchemaVersion } from "./sqlite.ts";

/** A read-only connection to the file at `path`; one a newer release wrote is refused (StoreSchemaError). */
export function openSqliteReadOnly(path: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  try {
    sqliteSchemaVersion(db, path);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

export function hasTable(db: Database.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}
