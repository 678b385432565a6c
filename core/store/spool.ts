// A durable spool on this machine: an append-only file of JSON lines, one item per key, fsync'd before append()
// resolves (appends of one event-loop turn share one write and one fsync), and drained into a sink — the store —
// when it can take them. The sink must be idempotent per key: a crash between the sink's write and the file's
// compaction replays those items once more, and that is what makes the replay exactly-once.
// One file per process (<name>.<store>.<pid>.jsonl), so replicas and workers sharing a directory never write one file;
// a process adopts the files of processes that are gone (a killed worker, a crashed replica, its own previous life)
// when they were written for the same store (spool-files.ts): another store's records are left alone.
// Reusable: the ledger uses it while the store is down; a database writer can spool every record and drain in batches.
import { mkdirSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { SpoolFiles, alive } from "./spool-files.ts";

export { alive };

interface Entry<T> {
  key: string;
  /** When it was spooled, ms since the epoch. */
  at: number;
  item: T;
}

/** Where an appended item is kept: on disk (fsync'd), or only in memory because the file could not be written. */
export type Kept = "durable" | "memory";

interface Waiter {
  line: string;
  resolve(kept: Kept): void;
}

export class Spool<T> {
  /** Every item not yet drained, oldest first, by key. */
  private readonly entries = new Map<string, Entry<T>>();
  private readonly file: string;
  private fh: FileHandle | undefined;
  private waiting: Waiter[] = [];
  /** File work (appends, compaction) one at a time. */
  private io: Promise<void> = Promise.resolve();
  private draining: Promise<number> | undefined;
  /** The last append could not reach the disk: the next compaction rewrites the file from memory. */
  private dirty = false;

  private readonly files: SpoolFiles;

  private constructor(readonly dir: string, name: string, private readonly log?: Logger, store?: string) {
    this.files = new SpoolFiles(dir, name, store, log);
    this.file = join(dir, `${this.files.base}.${process.pid}.jsonl`);
  }

  /**
   * Open the spool in `dir` (created when first written), adopting what earlier or dead processes left there for the
   * same `store` (spool-identity.ts: the tag of the store the items are drained into).
   */
  static async open<T>(dir: string, name: string, log?: Logger, store?: string): Promise<Spool<T>> {
    const s = new Spool<T>(dir, name, log, store);
    s.adopt();
    if (s.entries.size || s.adopted.length) await s.compact();
    return s;
  }

  get size(): number {
    return this.entries.size;
  }

  /** ms since the epoch of the oldest item waiting, or undefined when none is. */
  get oldestAt(): number | undefined {
    for (const e of this.entries.values()) return e.at;
    return undefined;
  }

  /**
   * The items when the file does not hold them all (a write failed: they are in memory only), else none. Synchronous,
   * for an exit that cannot wait (a second signal during shutdown).
   */
  heldInMemory(): T[] {
    return this.dirty ? [...this.entries.values()].map((e) => e.item) : [];
  }

  /** Keep `item` until it is drained; resolves once it is on disk ("durable") or could only be kept in memory. */
  append(key: string, item: T): Promise<Kept> {
    const e: Entry<T> = { key, at: Date.now(), item };
    this.entries.delete(key);
    this.entries.set(key, e);
    return new Promise<Kept>((resolve) => {
      this.waiting.push({ line: JSON.stringify({ k: key, t: e.at, v: item }) + "\n", resolve });
      if (this.waiting.length === 1) setImmediate(() => (this.io = this.io.then(() => this.flush())));
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0);
    if (!batch.length) return;
    let kept: Kept = "durable";
    if (this.dirty) {
      // Earlier items reached only memory: write the whole spool again (it holds these items too).
      await this.compact();
      for (const w of batch) w.resolve(this.dirty ? "memory" : "durable");
      return;
    }
    try {
      if (!this.fh) await this.openFile();
      await this.fh!.write(batch.map((w) => w.line).join(""));
      await this.fh!.datasync();
    } catch (err) {
      kept = "memory";
      this.dirty = true;
      // A half-written line is dropped on load (it never parses); the file is rewritten whole once the disk allows.
      await this.fh?.close().catch(() => {});
      this.fh = undefined;
      this.log?.error("spool: cannot write to disk; records kept in memory until the store takes them", { file: this.file, error: String(err) });
    }
    for (const w of batch) w.resolve(kept);
  }

  private async openFile(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    this.fh = await open(this.file, "a");
    await syncDir(this.dir); // the new file's name must survive a power cut too
  }

  /**
   * Hand every waiting item to `write`, oldest first, in batches; each batch is forgotten once `write` resolves,
   * and the file is then rewritten with what is left. Resolves with how many items were written; rejects with the
   * error of the first batch that fails (it and the rest stay spooled). One drain at a time; a second call joins.
   */
  drain(write: (batch: T[]) => Promise<void>, batchSize = 200): Promise<number> {
    return (this.draining ??= this.drainAll(write, batchSize).finally(() => (this.draining = undefined)));
  }

  /**
   * Take over the files of processes that are gone now (one may have died after open(), or still been a zombie
   * then): their items count in size and are drained with ours, even when nothing of our own waits. The number of
   * items newly loaded.
   */
  async adoptGone(): Promise<number> {
    const before = this.entries.size;
    if (this.adopt()) await this.compactNow();
    return this.entries.size - before;
  }

  private async drainAll(write: (batch: T[]) => Promise<void>, batchSize: number): Promise<number> {
    if (this.adopt()) await this.compactNow();
    let written = 0;
    try {
      while (this.entries.size) {
        const batch: Entry<T>[] = [];
        for (const e of this.entries.values()) {
          batch.push(e);
          if (batch.length === batchSize) break;
        }
        await write(batch.map((e) => e.item));
        // An item appended again while its batch was written (same key) is newer: keep it.
        for (const e of batch) if (this.entries.get(e.key) === e) this.entries.delete(e.key);
        written += batch.length;
      }
    } finally {
      if (written || this.dirty) await this.compactNow();
    }
    return written;
  }

  /** Rewrite the file with what is left (temp file, fsync, rename); an empty spool has no file. */
  private compactNow(): Promise<void> {
    return (this.io = this.io.then(() => this.compact()));
  }

  private async compact(): Promise<void> {
    try {
      await this.fh?.close();
      this.fh = undefined;
      let changed = this.entries.size > 0 || this.adopted.length > 0;
      if (!this.entries.size) {
        await unlink(this.file).then(() => (changed = true), (err) => { if (err.code !== "ENOENT") throw err; });
      } else {
        mkdirSync(this.dir, { recursive: true });
        const tmp = `${this.file}.tmp`;
        const fh = await open(tmp, "w");
        try {
          await fh.write([...this.entries.values()].map((e) => JSON.stringify({ k: e.key, t: e.at, v: e.item }) + "\n").join(""));
          await fh.datasync();
        } finally {
          await fh.close();
        }
        await rename(tmp, this.file);
      }
      if (changed) await syncDir(this.dir);
      this.dirty = false;
      this.forgetAdopted();
    } catch (err) {
      this.dirty = true;
      this.log?.error("spool: cannot rewrite the spool file; kept in memory, retried at the next drain", { file: this.file, error: String(err) });
    }
  }

  /**
   * Take over the files of processes that no longer run, written for our store: rename each to a name of ours (of two
   * processes racing for one, the rename of one fails), load its items, and remove it once they are in our own file.
   * Our own name left by an earlier process with the same pid (a container's pid 1) is read once, before we first
   * write. True when anything was loaded.
   */
  private adopt(): boolean {
    const own = `${this.files.base}.${process.pid}.jsonl`;
    let loaded = 0;
    for (const { file: n, pid } of this.files.ours(/^(?:[\w-]+\.)?jsonl$/)) {
      if (n === own) {
        if (!this.ownRead) loaded += this.load(join(this.dir, n));
        continue;
      }
      if (pid === process.pid ? this.adopted.includes(join(this.dir, n)) : alive(pid)) continue;
      const claimed = join(this.dir, `${this.files.base}.${process.pid}.adopt-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.jsonl`);
      try {
        renameSync(join(this.dir, n), claimed);
      } catch {
        continue; // another process took it
      }
      this.adopted.push(claimed);
      const got = this.load(claimed);
      loaded += got;
      this.log?.info("spool: adopted the records of a process that is gone", { file: n, records: got });
    }
    this.ownRead = true;
    return loaded > 0 || this.adopted.length > 0;
  }

  private ownRead = false;
  /** Files taken over from other processes, removed once their items are in our own file. */
  private readonly adopted: string[] = [];

  private load(path: string): number {
    let n = 0;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return 0;
    }
    for (const line of text.split("\n")) {
      if (!line) continue;
      try {
        const r = JSON.parse(line) as { k: string; t: number; v: T };
        if (typeof r.k !== "string") continue;
        if (!this.entries.has(r.k)) n++;
        this.entries.set(r.k, { key: r.k, at: r.t, item: r.v });
      } catch {
        // A line cut by a crash: never acknowledged (append resolves after the fsync), so nothing is lost.
      }
    }
    return n;
  }

  /** Remove adopted files once their items are in our own file. */
  private forgetAdopted(): void {
    for (const f of this.adopted.splice(0)) {
      try {
        unlinkSync(f);
      } catch {
        // already gone
      }
    }
  }

  /** Flush what is waiting; the file stays for the next process (or this one's next life) when items are left. */
  async close(): Promise<void> {
    await (this.io = this.io.then(() => this.flush()));
    await this.io;
    await this.fh?.close().catch(() => {});
    this.fh = undefined;
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
