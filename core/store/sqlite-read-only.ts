// A SQLite file opened by a command that only reads it (`usage`, `check`, `keys --config`), served by a gateway or
// not: never created, migrated or written to. A write there (an ALTER, a rollup rebuild, the schema stamp) would take
// the file's write lock from under a serving gateway, whose requests then wait on it and fail 503 STORE_UNAVAILABLE;
// and migrating a file nobody serves needs its serving lock, which would refuse a gateway starting meanwhile.
import Database from "better-sqlite3";
import { accessSync, closeSync, constants, existsSync, openSync, readSync } from "node:fs";
import { basename, dirname } from "node:path";
import { sqliteSchemaVersion } from "./sqlite.ts";

/** A read-only connection to the file at `path`; one a newer release wrote is refused (StoreSchemaError). */
export function openSqliteReadOnly(path: string, busyTimeoutMs: number): Database.Database {
  let db: Database.Database;
  try {
    db = openSqliteForReading(path, busyTimeoutMs);
  } catch (err) {
    throw explained(path, err);
  }
  try {
    sqliteSchemaVersion(db, path);
  } catch (err) {
    db.close();
    throw explained(path, err);
  }
  return db;
}

/**
 * A connection that reads the file at `path` and leaves the directory as it found it. SQLite makes -wal and -shm
 * beside a WAL-mode file even to read it, and only a connection that may write removes them, as the last one to
 * close. So a file with no -wal or -shm beside it (nobody has it open) is opened read-write with every write refused
 * (query_only), and its close takes them away again; one with them (served, or left by a gateway that crashed) is
 * opened read-only, which leaves them as they are (a read-write close would checkpoint a crashed gateway's -wal).
 */
export function openSqliteForReading(path: string, busyTimeoutMs: number): Database.Database {
  const sideFiles = existsSync(`${path}-wal`) || existsSync(`${path}-shm`);
  const db = new Database(path, { readonly: sideFiles, fileMustExist: true, timeout: busyTimeoutMs });
  try {
    if (!sideFiles) db.pragma("query_only = ON");
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

export function hasTable(db: Database.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}

export interface ReadOnlyProbe {
  /** The file's header says WAL mode (bytes 18 and 19 are 2). */
  walMode(path: string): boolean;
  /** The errno code when this process may not write `dir`, else undefined. */
  unwritable(dir: string): string | undefined;
  exists(path: string): boolean;
}

const realProbe: ReadOnlyProbe = {
  walMode(path) {
    try {
      const fd = openSync(path, "r");
      try {
        const b = Buffer.alloc(20);
        return readSync(fd, b, 0, 20, 0) === 20 && b[18] === 2 && b[19] === 2;
      } finally {
        closeSync(fd);
      }
    } catch {
      return false;
    }
  },
  unwritable(dir) {
    try {
      accessSync(dir, constants.W_OK);
      return undefined;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? "EACCES";
    }
  },
  exists: existsSync,
};

/**
 * What the operator can do when SQLite refused to read a WAL-mode file in a directory this process may not write
 * (it said only "attempt to write a readonly database" or "unable to open database file"): SQLite makes the -shm file
 * beside a WAL database even to read it, unless it is opened immutable, which needs a `file:` URI that this build of
 * better-sqlite3 does not take (SQLITE_USE_URI=0, no SQLITE_OPEN_URI). Undefined for any other failure.
 */
export function readOnlyOpenProblem(path: string, err: unknown, probe: ReadOnlyProbe = realProbe): string | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string" || !/^SQLITE_(READONLY|CANTOPEN)/.test(code) || !probe.walMode(path)) return undefined;
  const dir = dirname(path);
  const why = probe.unwritable(dir);
  if (!why) return undefined;
  const state = why === "EROFS" ? "is on a read-only file system" : `is not writable by this process (uid ${process.getuid?.() ?? "?"})`;
  // Without a -wal file beside it every record is in the file itself, so a copy reads the same.
  const copy = probe.exists(`${path}-wal`) ? "" : ", or give it a copy of the file in a directory it may write";
  return `cannot read ${path}: it is a WAL-mode SQLite file, and SQLite makes ${basename(path)}-shm beside it even to read ` +
    `one, but the directory ${dir} ${state} (${why}): run this as a user who may write ${dir} (the gateway's own)${copy}`;
}

function explained(path: string, err: unknown): unknown {
  const problem = readOnlyOpenProblem(path, err);
  return problem ? Object.assign(new Error(problem, { cause: err }), { code: (err as { code?: unknown }).code }) : err;
}
