// Creating a store's directories (the SQLite file's, the spool, the epoch file's). Node's mkdirSync(dir, { recursive:
// true }) goes round for ever, at 100% CPU, under a directory that exists but takes no new entries: mkdir in /dev/fd or
// /proc/self/fd says ENOENT, so it makes the parent (EEXIST) and tries again. A config read from <(...) put its
// store there. Here each missing directory is made once, top down, and the first refusal is the error.
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** `mkdir -p dir`, bounded by the number of directories to make; an error names the directory it could not make. */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    const kind = kindOf(d);
    if (kind === "dir") break;
    if (kind === "other") throw refused(d, "ENOTDIR", `${d} is a file, not a directory`);
    missing.push(d);
    if (dirname(d) === d) break; // a root that is not there: mkdir below says why
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (code === "EEXIST" && kindOf(d) === "dir") continue; // another process made it meanwhile
      // ENOENT with the parent there: a directory that takes no new entries (/dev/fd, /proc/self/fd).
      const why = code === "ENOENT" && kindOf(dirname(d)) === "dir" ? `${dirname(d)} takes no new directories` : (err as Error).message;
      throw refused(d, code, why);
    }
  }
}

function kindOf(path: string): "dir" | "other" | undefined {
  try {
    return statSync(path).isDirectory() ? "dir" : "other";
  } catch {
    return undefined;
  }
}

function refused(dir: string, code: string, why: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`cannot create the directory ${dir}: ${why} (${code})`), { code, path: dir });
}
