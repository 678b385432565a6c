// A read-modify-write of gateway.yaml that neither loses nor exposes a half-done edit. Two `keys` commands at once
// would each read the same text and the later write would drop the other's key; and a write in place truncates the
// file first, so a reader (another command, the gateway's config watch) could see it empty or cut short. So each
// edit holds an exclusive lock file beside the file (created with O_EXCL, waited for a bounded time, taken over when
// its holder is gone), and writes the new text to a temporary file in the same directory that is renamed over the
// file: readers see the old text or the new, whole. A symlink is resolved and its target replaced (the link stays),
// with the file's mode (and, where allowed, owner) kept.
//
// Where that cannot be done the edit still happens, under the lock:
// - the file is a mount point of its own (Docker's `-v ./gateway.yaml:/app/gateway.yaml`: rename fails EBUSY), on
//   another device (EXDEV) or the directory refuses the temporary file: the file is written in place, what grows it
//   first and then cut to its length, so a reader never sees it empty, and a write that fails part-way (a full disk,
//   a quota) leaves the old text as it was (see writeInPlace);
// - the directory refuses the lock file: the lock is taken in os.tmpdir() instead, named by a hash of the file's real
//   path, so every command that cannot write the directory takes turns on the same lock. (A command that can write
//   the directory, e.g. root's, uses the lock beside the file and does not wait for those: the directory's owner is
//   expected to edit the one way.) If neither place takes a lock, the edit goes ahead with a one-line warning.
import {
  closeSync, fchmodSync, chownSync, fstatSync, fsyncSync, ftruncateSync, linkSync, openSync, readFileSync, readSync, realpathSync, renameSync,
  statSync, unlinkSync, writeFileSync, writeSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createHash, randomBytes } from "node:crypto";

/** An edit that could not be done, in one line naming the file and why. */
export class LockedEditError extends Error {}
export class LockBusyError extends LockedEditError {}

export interface LockOptions {
  /** How long to wait for another edit to finish. */
  waitMs?: number;
  /** A lock older than this is taken over even when its holder cannot be asked (another host, a recycled pid). */
  staleMs?: number;
  /** Where a one-line warning goes (an edit made without any lock). */
  warn?: (message: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codeOf = (err: unknown) => (err as NodeJS.ErrnoException)?.code;
const unique = () => `${process.pid}.${randomBytes(4).toString("hex")}`;

const REASONS: Record<string, string> = {
  EACCES: "permission denied", EPERM: "not permitted", EROFS: "read-only file system", ENOSPC: "no space left on the device",
  EBUSY: "busy", EISDIR: "a directory", ENOENT: "no such file", EDQUOT: "disk quota exceeded", EFBIG: "file too large",
  EIO: "input/output error",
};
const why = (err: unknown) => `${REASONS[codeOf(err) ?? ""] ?? (err as Error).message} (${codeOf(err) ?? "error"})`;

/** The lock file's identity and text, read from one open file (so they belong to the same file). */
function snapshot(lock: string): { id: string; text: string; mtimeMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(lock, "r");
  } catch {
    return undefined; // gone: the next try takes it
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    const text = readFileSync(fd, "utf8");
    // Inode and mtime tell a new lock from the old one even when both are still empty (created, not yet written).
    return { id: `${st.ino}:${st.mtimeNs}:${text}`, text, mtimeMs: Number(st.mtimeNs / 1_000_000n) };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

interface Holder {
  pid: number;
  host: string;
}

/** The identity of a lock whose holder has died (on this host) or that is older than staleMs; else undefined. */
function staleId(lock: string, staleMs: number): string | undefined {
  const s = snapshot(lock);
  if (!s) return undefined;
  if (Date.now() - s.mtimeMs > staleMs) return s.id;
  let h: Holder;
  try {
    h = JSON.parse(s.text) as Holder;
  } catch {
    return undefined; // being written this instant
  }
  if (h.host !== hostname() || !Number.isInteger(h.pid)) return undefined;
  try {
    process.kill(h.pid, 0);
    return undefined;
  } catch (err) {
    return codeOf(err) === "ESRCH" ? s.id : undefined;
  }
}

/** Create `path` with O_EXCL holding this process's record; undefined when it exists. Other errors are thrown. */
function create(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o644); // readable by all: another user's command can see the holder is gone
  } catch (err) {
    if (codeOf(err) === "EEXIST") return undefined;
    throw err;
  }
  const text = JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), nonce: randomBytes(6).toString("hex") });
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return text;
}

/**
 * Remove `path` only while it is still the file whose identity is `id`, claiming it by a rename first. False when it
 * is there but cannot be moved (another user's file in a sticky directory).
 */
function removeIf(path: string, id: string): boolean {
  const claimed = `${path}.${unique()}.old`;
  try {
    renameSync(path, claimed);
  } catch (err) {
    return codeOf(err) === "ENOENT"; // gone already
  }
  if (snapshot(claimed)?.id !== id) {
    try {
      linkSync(claimed, path); // not the one judged: put it back (unless a new one is there already)
    } catch {
      // a new one was made meanwhile
    }
  }
  try {
    unlinkSync(claimed);
  } catch {
    // gone
  }
  return true;
}

/**
 * Remove the stale lock judged by its identity `id`; false when it could not be (another user's lock in a sticky
 * directory: EPERM), so the wait runs out with a message naming it. Takeovers take turns on a guard file, so no
 * waiter can remove a lock another waiter has just made in the stale one's place: a dead holder's lock changes only
 * by a takeover, and under the guard it is checked to be still the one judged stale before it is removed.
 */
function takeOver(lock: string, id: string): boolean {
  const guard = `${lock}.takeover`;
  let mine: string | undefined;
  try {
    mine = create(guard);
  } catch {
    return false;
  }
  if (mine === undefined) {
    // Held only for the moment of a takeover: one that stays was left by a process killed in it.
    const g = staleId(guard, 5_000);
    return g !== undefined && removeIf(guard, g);
  }
  try {
    if (snapshot(lock)?.id === id) unlinkSync(lock);
    return true;
  } catch (err) {
    return codeOf(err) === "ENOENT"; // gone meanwhile: taken over all the same
  } finally {
    release(guard, mine);
  }
}

/** Remove our own lock (not one that replaced it after a takeover). */
function release(path: string, text: string): void {
  const s = snapshot(path);
  if (s?.text === text) removeIf(path, s.id);
}

/** The lock beside the file; where its directory refuses it, one in os.tmpdir() named by the file's real path. */
function lockPaths(real: string): string[] {
  return [`${real}.lock`, join(tmpdir(), `model-gateway-${createHash("sha256").update(real).digest("hex").slice(0, 16)}.lock`)];
}

const REFUSED = new Set(["EACCES", "EPERM", "EROFS"]);

async function acquire(real: string, o: Required<Omit<LockOptions, "warn">> & Pick<LockOptions, "warn">): Promise<() => void> {
  const until = Date.now() + o.waitMs;
  const paths = lockPaths(real);
  const refused: string[] = [];
  /** The lock made (its text), undefined when it is held, null when this place refuses it. */
  const make = (lock: string): string | undefined | null => {
    try {
      return create(lock);
    } catch (err) {
      if (!REFUSED.has(codeOf(err) ?? "")) throw new LockedEditError(`cannot create the lock file ${lock}: ${why(err)}`);
      refused.push(`${lock}: ${why(err)}`);
      return null;
    }
  };
  places: for (const lock of paths) {
    // The deadline is checked and a sleep taken on every pass: a lock that can be neither made nor taken over (another
    // user's, left in a sticky /tmp) must end in the message below, not a loop at full CPU.
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      let mine = make(lock);
      if (mine === undefined) {
        const stale = staleId(lock, o.staleMs);
        if (stale !== undefined && takeOver(lock, stale)) mine = make(lock);
      }
      if (mine === null) continue places; // try the next place
      if (mine !== undefined) {
        const text = mine;
        return () => release(lock, text);
      }
      if (Date.now() >= until) throw busy(lock, o);
      await sleep(delay + Math.floor(Math.random() * delay));
    }
  }
  (o.warn ?? ((m: string) => process.stderr.write(`warning: ${m}\n`)))(`no lock file could be made for ${real} (${refused.join("; ")}); editing it without one, so do not run another edit of it at the same time`);
  return () => {};
}

/** The wait for `lock` ran out: who holds it, or that its holder is gone and the file must be deleted by hand. */
function busy(lock: string, o: { waitMs: number; staleMs: number }): LockBusyError {
  let h: Partial<Holder> | undefined;
  try {
    h = JSON.parse(snapshot(lock)?.text ?? "");
  } catch {
    h = undefined;
  }
  const who = h?.pid ? ` (pid ${h.pid} on ${h.host})` : "";
  if (staleId(lock, o.staleMs) !== undefined) {
    return new LockBusyError(`${lock} was left by an edit that is gone${who} and this user cannot remove it; delete ${lock} and try again`);
  }
  return new LockBusyError(`${basename(dirname(lock))}/${basename(lock)} is held by another edit${who} for more than ` +
    `${Math.round(o.waitMs / 1000)}s; try again, or delete ${lock} if no such command is running`);
}

/** The rename failures of a file that can still be written in place. */
const IN_PLACE = new Set(["EBUSY", "EXDEV", "EPERM", "EACCES", "EROFS"]);

/** Test seam: the writes of an in-place edit, so a test can make one fail part-way. */
export const inPlaceIo = { write: writeSync };

/** Write all of `buf` at `pos`. */
function writeAt(fd: number, buf: Buffer, pos: number): void {
  for (let off = 0; off < buf.length; ) off += inPlaceIo.write(fd, buf, off, buf.length - off, pos + off);
}

/** The whole file, read from `fd` at offset 0. */
function readAll(fd: number): Buffer {
  const buf = Buffer.alloc(fstatSync(fd).size);
  for (let off = 0, n = 1; off < buf.length && n > 0; off += n) n = readSync(fd, buf, off, buf.length - off, off);
  return buf;
}

/**
 * Write the new text over the file without a rename, never leaving it truncated or cut mid-entry. What grows the file
 * (where a full disk, a quota or a file-size limit fails) is written first, past the old end, so such a failure
 * leaves the old text whole and is undone by cutting it back; then the old length is overwritten and the file cut to
 * the new length. A failure after the old text is touched writes the old bytes back. A reader may, for an instant,
 * see the old text with the new tail after it, never an empty file.
 */
function writeInPlace(real: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(real, "r+");
  } catch (err) {
    throw new LockedEditError(`cannot write ${real}: ${why(err)}`);
  }
  let old: Buffer;
  try {
    old = readAll(fd); // the bytes to put back, read from the file being written
  } catch (err) {
    closeSync(fd);
    throw new LockedEditError(`cannot read ${real}: ${why(err)}`);
  }
  const next = Buffer.from(text);
  let touched = false; // the old bytes overwritten (else cutting back to the old length restores them)
  try {
    if (next.length > old.length) writeAt(fd, next.subarray(old.length), old.length);
    touched = true;
    writeAt(fd, next.subarray(0, Math.min(next.length, old.length)), 0);
    if (next.length < old.length) ftruncateSync(fd, next.length);
    fsyncSync(fd);
  } catch (err) {
    try {
      if (touched) writeAt(fd, old, 0);
      ftruncateSync(fd, old.length);
      fsyncSync(fd);
    } catch (again) {
      throw new LockedEditError(`cannot write ${real}: ${why(err)}; putting its previous text back failed too (${why(again)}), so it may be ` +
        `cut short: ${saveCopy(real, old)}`);
    }
    throw new LockedEditError(`cannot write ${real}: ${why(err)}; the file was left as it was`);
  } finally {
    closeSync(fd);
  }
}

/** Keep the text a failed in-place write could not put back: a file in os.tmpdir(), else stderr. Says where. */
function saveCopy(real: string, old: Buffer): string {
  const copy = join(tmpdir(), `${basename(real)}.${unique()}.before-edit`);
  try {
    writeFileSync(copy, old, { flag: "wx", mode: 0o600 });
    return `its previous text is saved in ${copy}`;
  } catch {
    process.stderr.write(`----- previous text of ${real} -----\n${old.toString("utf8")}\n----- end of the previous text of ${real} -----\n`);
    return "its previous text is printed on stderr above";
  }
}

/** Write `text` to `real` through a temporary file renamed over it, keeping its mode and owner; else in place. */
function replace(real: string, text: string): void {
  const st = statSync(real);
  const tmp = join(dirname(real), `.${basename(real)}.${unique()}.tmp`);
  let fd: number;
  try {
    fd = openSync(tmp, "wx", 0o600);
  } catch (err) {
    if (IN_PLACE.has(codeOf(err) ?? "")) return writeInPlace(real, text); // the directory takes no new file
    throw new LockedEditError(`cannot write ${real}: ${why(err)}`);
  }
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
    if (IN_PLACE.has(codeOf(err) ?? "")) return writeInPlace(real, text); // a bind-mounted file, another device
    throw new LockedEditError(`cannot write ${real}: ${why(err)}`);
  }
}

/**
 * Read `file`, give its text to `change`, and write what it returns, with no other locked edit in between and no
 * reader ever seeing a partial file. `change` may be async (a look at the gateway's store) and may throw to abandon.
 * A file-system failure is a LockedEditError with a one-line message.
 */
export async function lockedEdit(file: string, change: (text: string) => string | Promise<string>, opts: LockOptions = {}): Promise<void> {
  let real: string;
  try {
    real = realpathSync(file);
  } catch (err) {
    throw new LockedEditError(`cannot open ${file}: ${why(err)}`);
  }
  const release = await acquire(real, { waitMs: opts.waitMs ?? 30_000, staleMs: opts.staleMs ?? 10 * 60_000, warn: opts.warn });
  try {
    let text: string;
    try {
      text = readFileSync(real, "utf8");
    } catch (err) {
      throw new LockedEditError(`cannot read ${real}: ${why(err)}`);
    }
    replace(real, await change(text));
  } finally {
    release();
  }
}
