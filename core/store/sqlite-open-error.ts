// Why a SQLite file could not be opened. SQLite says only "unable to open database file"; the file system knows
// more: a read-only mount, a directory this user may not write, a file where a directory should be.
import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";

export interface FsProbe {
  access(path: string, mode: number): void;
  /** undefined when nothing is there */
  kind(path: string): "file" | "dir" | undefined;
}

const realFs: FsProbe = {
  access: (p, mode) => accessSync(p, mode),
  kind(p) {
    try {
      return statSync(p).isDirectory() ? "dir" : "file";
    } catch {
      return undefined;
    }
  },
};

const WHY: Record<string, string> = {
  EROFS: "is on a read-only file system",
  EACCES: `is not writable by this process (uid ${process.getuid?.() ?? "?"})`,
  EPERM: `is not writable by this process (uid ${process.getuid?.() ?? "?"})`,
};

/**
 * "cannot open PATH: <reason>" when the file system says why, else undefined (keep SQLite's own error). The file and
 * its directory (where SQLite writes -wal and -shm beside it) must both be writable.
 */
export function sqliteOpenProblem(path: string, fs: FsProbe = realFs): string | undefined {
  const reason = sqliteOpenReason(path, fs);
  return reason === undefined ? undefined : `cannot open ${path}: ${reason}`;
}

/** sqliteOpenProblem's reason alone (what follows "cannot open PATH: "). */
export function sqliteOpenReason(path: string, fs: FsProbe = realFs): string | undefined {
  const kind = fs.kind(path);
  if (kind === "dir") return "it is a directory, not a file: store.path names the database file";
  // The nearest directory that exists: what is missing below it is to be created in it.
  let dir = dirname(path);
  while (fs.kind(dir) === undefined && dirname(dir) !== dir) dir = dirname(dir);
  if (fs.kind(dir) === "file") return `${dir} is a file, not a directory`;
  for (const [target, what] of [[kind ? path : undefined, "the file"], [dir, "the directory"]] as const) {
    if (target === undefined) continue;
    try {
      fs.access(target, constants.R_OK | constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (WHY[code]) return `${what} ${target} ${WHY[code]} (${code})`;
    }
  }
  return undefined;
}

/**
 * SQLite's "database is locked" (SQLITE_BUSY, SQLITE_LOCKED) at open: another program holds a transaction on the file
 * past the wait. Not another gateway: those are refused by the serving lock (./sqlite-process-lock.ts) first.
 */
export function sqliteLockedProblem(path: string, err: unknown): string | undefined {
  const code = String((err as { code?: string })?.code ?? "");
  if (!/^SQLITE_(BUSY|LOCKED)/.test(code)) return undefined;
  return `cannot open ${path}: another process holds a lock on it (SQLite: ${(err as Error).message}), such as a sqlite3 shell or a backup ` +
    "with a transaction open on the file: end that transaction, or give this gateway another store.path";
}
