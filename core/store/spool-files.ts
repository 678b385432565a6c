// Which files in a spool directory a process may take over. A spool's files are <name>.<store>.<pid>.<rest>: the
// store tag (spool-identity.ts) says which store their records are for, so gateways on different stores can share a
// spool_dir and each adopts only its own store's records. Files of another store are left alone (said once at warn:
// the gateway on that store replays them when it starts there). Files without a tag (<name>.<pid>.<rest>: written
// before files named their store, or an unsaved-records file moved in by hand) cannot say whose they are: they are
// taken as before only while the directory holds no other store's file under this name, i.e. while it is not known
// to be shared; otherwise they are left alone and named at warn, to be renamed for the store they belong to.
import { readdirSync, readFileSync } from "node:fs";
import type { Logger } from "../log.ts";

export interface SpoolFile {
  /** The file's name in the directory. */
  file: string;
  /** The process that wrote it. */
  pid: number;
  /** `rest` matched against what follows the pid. */
  match: RegExpExecArray;
}

export class SpoolFiles {
  /** What this process's file names begin with: <name>.<store>, or <name> when no store is named. */
  readonly base: string;
  private readonly pattern: RegExp;
  private readonly warned = new Set<string>();

  constructor(private readonly dir: string, name: string, private readonly store: string | undefined, private readonly log?: Logger) {
    this.base = store ? `${name}.${store}` : name;
    this.pattern = new RegExp(`^${escape(name)}\\.(?:([a-z]+-[0-9a-f]+)\\.)?(\\d+)\\.(.+)$`);
  }

  /** The files in the directory whose part after the pid matches `rest` and that were written for our store. */
  ours(rest: RegExp): SpoolFile[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).sort();
    } catch {
      return [];
    }
    const mine: SpoolFile[] = [];
    const untagged: SpoolFile[] = [];
    const foreign: string[] = [];
    let shared = false;
    for (const file of names) {
      const m = this.pattern.exec(file);
      if (!m) continue;
      const [, tag, pid] = m;
      if (tag !== this.store && tag !== undefined) {
        shared = true;
        if (rest.test(m[3]!) && !alive(Number(pid))) foreign.push(file);
        continue;
      }
      const match = rest.exec(m[3]!);
      if (!match) continue;
      (tag === undefined && this.store !== undefined ? untagged : mine).push({ file, pid: Number(pid), match });
    }
    // A memory store never spools, and would lose what it adopted: it takes no untagged file either.
    const takeUntagged = !shared && !this.store?.startsWith("memory-");
    if (takeUntagged) mine.push(...untagged);
    this.warn(foreign, "spool: left alone the records of a gone process on another store (this spool_dir is shared by gateways on different stores); the gateway on that store replays them when it starts", {});
    this.warn(takeUntagged ? [] : untagged.filter((f) => f.pid === process.pid || !alive(f.pid)).map((f) => f.file),
      "spool: left alone records that do not say which store they are for (written before spool files named their store) because this spool_dir is shared with another store; rename each to begin with the name of the spool of the store it belongs to to replay it there",
      { thisStore: `${this.base}.<pid>.jsonl` });
    return mine;
  }

  /** Once per file (a writer looks every tick). */
  private warn(files: string[], message: string, extra: Record<string, unknown>): void {
    const fresh = files.filter((f) => !this.warned.has(f));
    if (!fresh.length) return;
    for (const f of fresh) this.warned.add(f);
    this.log?.warn(message, { dir: this.dir, files: fresh, ...extra });
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether process `pid` is running (EPERM: it is, under another user), so the files it writes are not to be taken.
 * A zombie (killed, not yet reaped by its parent) answers signal 0 but writes nothing any more: not alive.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !zombie(pid);
}

/** Linux: the state field of /proc/<pid>/stat (after the parenthesised command name) is Z. Elsewhere: unknown, no. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}
