// A read-modify-write of gateway.yaml that neither loses nor exposes a half-done edit. Two `keys` commands at once
// would each read the same text and the later write would drop the other's key; and a write in place truncates the
// file first, so a reader (another command, the gateway's config watch) could see it empty or cut short. So each
// edit holds an exclusive lock file beside the file (created with O_EXCL, waited for a bounded time, taken over when
// its holder is gone), and writes the new text to a temporary file in the same directory that is renamed over the
// file: readers see the old text or the new, whole. A symlink is resolved and its target replaced (the link stays),
// with the file's mode (and, where allowed, owner) kept.
import { chownSync, closeSync, fchmodSync, fsyncSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

export class LockBusyError extends Error {}

export interface LockOptions {
  /** How long to wait for another edit to finish. */
  waitMs?: number;
  /** A lock older than this is taken over even when its holder cannot be asked (another host, a recycled pid). */
  staleMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Holder {
  pid: number;
  host: string;
  at: number;
}

function holderOf(lock: string): Holder | undefined {
  try {
    return JSON.parse(readFileSync(lock, "utf8")) as Holder;
  } catch {
    return undefined; // gone, or being written this instant
  }
}

/** A lock whose holder has died (on this host) or that is older than staleMs. */
function isStale(lock: string, staleMs: number): boolean {
  let mtime: number;
  try {
    mtime = statSync(lock).mtimeMs;
  } catch {
    return false; // gone: the next try takes it
  }
  if (Date.now() - mtime > staleMs) return true;
  const h = holderOf(lock);
  if (!h || h.host !== hostname() || !Number.isInteger(h.pid)) return false;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

async function acquire(lock: string, o: Required<LockOptions>): Promise<() => void> {
  const until = Date.now() + o.waitMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    try {
      const fd = openSync(lock, "wx", 0o600);
      try {
        writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now() }));
      } finally {
        closeSync(fd);
      }
      return () => {
        try {
          unlinkSync(lock);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (isStale(lock, o.staleMs)) {
      try {
        unlinkSync(lock);
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    if (Date.now() >= until) {
      const h = holderOf(lock);
      throw new LockBusyError(`${basename(dirname(lock))}/${basename(lock)} is held by another edit${h ? ` (pid ${h.pid} on ${h.host})` : ""} for more than ` +
        `${Math.round(o.waitMs / 1000)}s; try again, or delete ${lock} if no such command is running`);
    }
    await sleep(delay + Math.floor(Math.random() * delay));
  }
}

/** Write `text` to `real` through a temporary file renamed over it, keeping its mode and owner. */
function replace(real: string, text: string): void {
  const st = statSync(real);
  const tmp = join(dirname(real), `.${basename(real)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", 0o600);
  try {
    try {
      fchmodSync(fd, st.mode & 0o7777); // not left to the umask
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (process.getuid?.() === 0 && (st.uid !== process.getuid() || st.gid !== process.getgid?.())) chownSync(tmp, st.uid, st.gid);
    renameSync(tmp, real);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never made
    }
    throw err;
  }
}

/**
 * Read `file`, give its text to `change`, and write what it returns, with no other locked edit in between and no
 * reader ever seeing a partial file. `change` may be async (a look at the gateway's store) and may throw to abandon.
 */
export async function lockedEdit(file: string, change: (text: string) => string | Promise<string>, opts: LockOptions = {}): Promise<void> {
  const real = realpathSync(file);
  const release = await acquire(`${real}.lock`, { waitMs: opts.waitMs ?? 30_000, staleMs: opts.staleMs ?? 10 * 60_000 });
  try {
    const next = await change(readFileSync(real, "utf8"));
    replace(real, next);
  } finally {
    release();
  }
}
