// `model-gateway check` runs start's check of a SQLite store.path (core/store/sqlite-open-error.ts) without opening
// or creating anything (no file, no <path>.lock). A path no user could open — a directory, a file where a directory
// should be — is a problem at the config's store: line, as start refuses it; one only this user may not write is a
// note, since start may run as another user (the gateway's own); a read-only file system refuses every user, so it is
// a problem. A file that is not a SQLite database (a text file) is a problem too: start refuses it as damaged.
// A config without store: (the default file beside it, a place the operator never chose) is held to more: any
// refusal, this user's too, is a problem saying so and what to write, and so is a config read from a pipe.
import { accessSync, statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { ConfigProblem } from "./config/source.ts";
import type { StoreConfig } from "./generated/types/gateway.ts";
import { sqliteOpenProblem, sqliteOpenReason, type FsProbe } from "./store/sqlite-open-error.ts";
import { defaultStoreHasNoPlace, defaultStoreUnusable } from "./store/default-store.ts";
import { openSqliteForReading } from "./store/sqlite-read-only.ts";
import { sqlitePathOf, storeProblem } from "./store/index.ts";
import { damaged } from "./store/sqlite.ts";

/** What the file system says of paths, leaving out who may write them (a read-only file system: nobody). */
const whoeverRuns: FsProbe = {
  access(p, mode) {
    try {
      accessSync(p, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EROFS") throw err;
    }
  },
  kind(p) {
    try {
      return statSync(p).isDirectory() ? "dir" : "file";
    } catch {
      return undefined;
    }
  },
};

/**
 * `defaulted`: the config has no store: section. `thisUser`: what the file system lets this process do (tests give
 * another).
 */
export function storePathCheck(
  store: StoreConfig | undefined, configDir: string, configFile: string, defaulted = false, thisUser?: FsProbe,
): { problem?: ConfigProblem; note?: string } {
  if (store?.kind !== "sqlite") return {};
  const path = sqlitePathOf(store, configDir);
  if (path === ":memory:") return {};
  if (defaulted) {
    const why = defaultStoreHasNoPlace(configFile, configDir) ?? defaultUnusable(path, thisUser);
    if (why) return { problem: storeProblem(store, configFile, why) };
  }
  const refused = sqliteOpenProblem(path, whoeverRuns);
  if (refused) return { problem: storeProblem(store, configFile, refused) };
  const notADatabase = whoeverRuns.kind(path) === "file" ? damagedFile(path) : undefined;
  if (notADatabase) return { problem: storeProblem(store, configFile, notADatabase) };
  const forThisUser = sqliteOpenProblem(path, thisUser);
  return forThisUser ? { note: `start run by this user would refuse the store: ${forThisUser}` } : {};
}

/**
 * Start's refusal of the default SQLite file. A file already there is a running deployment's store, perhaps of another
 * user (the gateway's own): only what refuses every user is a problem, and this user's refusal is the note a named
 * path gets. Nothing there yet: the place is held to this user's rights too.
 */
function defaultUnusable(path: string, thisUser?: FsProbe): string | undefined {
  const exists = whoeverRuns.kind(path) !== undefined;
  const reason = sqliteOpenReason(path, whoeverRuns) ?? (exists ? undefined : sqliteOpenReason(path, thisUser));
  return reason ? defaultStoreUnusable(path, reason, exists) : undefined;
}

/** Start's refusal of a file SQLite does not take for a database, read through a connection that writes nothing. */
function damagedFile(path: string): string | undefined {
  let db: Database.Database | undefined;
  try {
    db = openSqliteForReading(path, 2_000);
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    return undefined;
  } catch (err) {
    const code = String((err as { code?: string }).code ?? "");
    // Anything else (a lock, a permission) is for the other checks, or for start, to name.
    return code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT") ? damaged(path, (err as Error).message) : undefined;
  } finally {
    db?.close();
  }
}
