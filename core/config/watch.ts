// Reload when the config, or a file it includes, changes — however it is written. Editors and tools replace a file
// rather than write into it (sed -i, vim, `cp && mv`, a Kubernetes ConfigMap's `..data` symlink swap), and a watch
// on the file follows the old inode: after the first replace it never fires again. So the watch is on each file's
// directory (and, for a symlink, its target's), filtered by name; a change is acted on once its content differs
// from what was last seen, so one save that makes several events reloads once, and a file that is briefly gone
// (renamed away, deleted before being written anew) is waited for rather than reloaded as an error; one that is
// there but unreadable is reloaded, and so refused and counted.
// A file written in place (truncated, then written: `>`, a generator, many editors) is cut short until its writer is
// done, and a cut YAML file usually still parses (a prefix of a map is a map) while dropping every project or key
// after the cut. So a change is acted on only once the files have stayed the same for a quiet time, however long
// the writing goes on or pauses: a half-written file is never what reloads.
import { watch, readFileSync, realpathSync, statSync, type FSWatcher } from "node:fs";
import { createHash } from "node:crypto";
import { basename, dirname } from "node:path";
import type { Logger } from "../log.ts";
import type { WatchedFiles } from "./watched-files.ts";
import type { ConfigTexts } from "./config-texts.ts";

export interface ConfigWatchOptions {
  /**
   * The files to follow, asked again after each change (a reload may add or drop an include); a plain list is
   * followed and waited for whole.
   */
  files(): string[] | WatchedFiles;
  /** Called once per change of content; the watch waits for it before acting on the next. */
  onChange(): Promise<unknown> | void;
  log: Logger;
  /**
   * The texts the serving config was loaded from: what a change is measured from. A gateway reads its files long
   * before it watches them (plugin imports, store connect, listen), and a worker joining a cluster loads the others'
   * texts, not the disk's: an edit made meanwhile differs from these, and so is reloaded, where a baseline read from
   * the disk at the watch's start would take it for what is serving. Files not in it are measured from the disk.
   */
  served?: ConfigTexts;
  /** Quiet time after the last event before looking (one save is often several events). */
  debounceMs?: number;
  /** How long the files' content must stay the same, once changed, before the change is acted on. */
  quietMs?: number;
}

export interface ConfigWatch {
  close(): void;
}

/** Looked at, at the latest, this long after the first of a burst of events, however long the burst. */
const MAX_WAIT_MS = 1000;
/** A change is acted on once the content has stayed the same this long (longer than a writer's pauses). */
const QUIET_MS = 2000;
/** A file still changing after this long is logged (once), as nothing reloads until it stops. */
const STILL_CHANGING_MS = 30_000;
/** How often a directory that could not be watched (gone, no inotify watches left) is tried again. */
const RETRY_MS = 2000;

export function watchConfig(o: ConfigWatchOptions): ConfigWatch {
  const debounceMs = o.debounceMs ?? 150;
  const quietMs = o.quietMs ?? QUIET_MS;
  /** Directory -> its watcher and the names in it that matter. */
  const dirs = new Map<string, { watcher?: FSWatcher; names: Set<string> }>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let firstEventAt = 0;
  let busy: Promise<void> | undefined;
  let again = false;
  let files: string[] = [];
  let awaited = new Set<string>();
  const ask = () => {
    const w = o.files();
    files = Array.isArray(w) ? w : w.files;
    awaited = new Set(Array.isArray(w) ? w : w.awaited);
  };
  ask();
  let last = fingerprint(files, o.served);
  let missing: string[] = [];
  /** Changed content not acted on yet: its key, when it was first seen so, and when the changing began. */
  let pending: { key: string; since: number; changingSince: number; warned: boolean } | undefined;
  const onDisk = fingerprint(files);
  if (onDisk.key !== last.key) {
    // Changed since it was read: its files' last write is when it was first so, so a file written well before now is
    // reloaded at once and one still being written waits for the quiet time, as any change does.
    const since = Math.min(Date.now(), lastWritten(files));
    pending = { key: onDisk.key, since, changingSince: since, warned: false };
  }
  const unwatchable = new Set<string>();

  const schedule = () => {
    if (closed) return;
    const now = Date.now();
    if (!firstEventAt) firstEventAt = now;
    lookIn(now - firstEventAt >= MAX_WAIT_MS ? 0 : debounceMs);
  };

  const lookIn = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(fire, ms);
  };

  const fire = () => {
    timer = undefined;
    firstEventAt = 0;
    if (busy) {
      again = true; // changes during a reload are looked at once it is done
      return;
    }
    busy = check().catch((err) => o.log.error("config watch failed", { error: String(err) })).finally(() => {
      busy = undefined;
      if (again && !closed) {
        again = false;
        schedule();
      }
    });
  };

  async function check(): Promise<void> {
    const fp = fingerprint(files);
    const gone = files.filter((f, i) => fp.parts[i] === undefined && awaited.has(f));
    if (gone.length) {
      if (gone.join("\n") !== missing.join("\n")) {
        o.log.warn("config file gone; still serving the last config, and watching for it to come back", { files: gone });
      }
      missing = gone;
      pending = undefined;
      arm(); // a directory replaced along with the file is watched anew
      return;
    }
    missing = [];
    if (fp.key === last.key) {
      pending = undefined; // back to what is serving: nothing to do
    } else if (settled(fp.key)) {
      pending = undefined;
      last = fp;
      await o.onChange();
      ask();
      last = fingerprint(files); // the reload may have added an include
    }
    arm();
  }

  /** Whether changed content has stayed the same for the quiet time; if not yet, a look is set for when it may have. */
  function settled(key: string): boolean {
    const now = Date.now();
    if (pending?.key !== key) {
      pending = { key, since: now, changingSince: pending?.changingSince ?? now, warned: pending?.warned ?? false };
    }
    const waited = now - pending.since;
    if (waited >= quietMs) return true;
    if (!pending.warned && now - pending.changingSince >= STILL_CHANGING_MS) {
      pending.warned = true;
      o.log.warn("config file still changing; still serving the last config, and reloading once it stays the same", {
        files, changing_for_s: Math.round((now - pending.changingSince) / 1000), quiet_ms: quietMs,
      });
    }
    lookIn(quietMs - waited);
    return false;
  }

  function arm(): void {
    if (closed) return;
    const want = new Map<string, Set<string>>();
    const add = (path: string) => {
      const d = dirname(path);
      if (!want.has(d)) want.set(d, new Set());
      want.get(d)!.add(basename(path));
    };
    for (const f of files) {
      add(f);
      try {
        const real = realpathSync(f);
        if (real !== f) add(real); // a symlinked file: its target's directory is where edits happen
      } catch {
        // gone for now: its own directory's watch sees it come back
      }
    }
    for (const [d, entry] of dirs) {
      if (want.has(d)) continue;
      entry.watcher?.close();
      dirs.delete(d);
    }
    let failed = false;
    for (const [d, names] of want) {
      const entry = dirs.get(d);
      if (entry?.watcher) {
        entry.names = names;
        continue;
      }
      try {
        const w = watch(d, { persistent: false }, (_event, name) => {
          const n = name?.toString();
          // `..data` and friends: a Kubernetes volume swaps the symlink its files point through.
          if (!n || dirs.get(d)?.names.has(n) || n.startsWith("..")) schedule();
        });
        w.on("error", (err) => {
          o.log.warn("config watch lost a directory; trying again", { dir: d, error: err.message });
          w.close();
          const e = dirs.get(d);
          if (e?.watcher === w) e.watcher = undefined;
          retryLater();
          schedule();
        });
        dirs.set(d, { watcher: w, names });
        unwatchable.delete(d);
      } catch (err) {
        if (!unwatchable.has(d)) o.log.warn("cannot watch a config directory; SIGHUP still reloads", { dir: d, error: (err as Error).message });
        unwatchable.add(d);
        dirs.set(d, { names });
        failed = true;
      }
    }
    if (failed) retryLater();
  }

  function retryLater(): void {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      arm();
      schedule(); // whatever happened meanwhile
    }, RETRY_MS);
    retry.unref();
  }

  arm();
  if (pending) lookIn(0);
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(retry);
      for (const e of dirs.values()) e.watcher?.close();
      dirs.clear();
    },
  };
}

/**
 * Each file's content hash (undefined when it is gone), and all of them as one key. A file that is there but cannot
 * be read (permissions, a directory in its place) is a change like any other: the reload it causes is refused and
 * counted, where taking it for gone would wait in silence while the gateway reported its config as current.
 */
function fingerprint(files: string[], served?: ConfigTexts): { key: string; parts: Array<string | undefined> } {
  const parts = files.map((f) => {
    // As text, as the config's load reads it, so a served text and the same file on disk hash alike.
    if (served && Object.hasOwn(served, f)) return createHash("sha256").update(served[f]!).digest("hex");
    try {
      return createHash("sha256").update(readFileSync(f, "utf8")).digest("hex");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === "ENOENT" || code === "ENOTDIR" ? undefined : `unreadable:${code ?? String(err)}`;
    }
  });
  return { key: parts.map((p) => p ?? "-").join(","), parts };
}

/** When the newest of these files was last written (0 when none can be read). */
function lastWritten(files: string[]): number {
  let newest = 0;
  for (const f of files) {
    try {
      newest = Math.max(newest, statSync(f).mtimeMs);
    } catch {
      // gone or unreadable: its own check says so
    }
  }
  return newest;
}
