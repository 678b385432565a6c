// Overflow for a spool whose sink is down for long: records past what the spool keeps in memory go to append-only
// segment files (JSON lines, fsync'd before append() resolves, appends of one event-loop turn sharing one write and
// one fsync), read back from disk in batches when the sink answers, a whole segment deleted once every batch of it
// is written. Memory stays flat however long the outage: only counts are held. The sink must be idempotent: a
// segment partly written before a crash is read again from its start. Files are <name>.<store>.<pid>.<n>.seg; a
// process takes over the segments of processes that are gone (renamed to its own pid first, so two never take one),
// only those written for its own store (spool-files.ts).
import { createReadStream, mkdirSync, renameSync } from "node:fs";
import { open, unlink, type FileHandle } from "node:fs/promises";
import { createInterface } from "node:readline";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import type { Kept } from "./spool.ts";
import { SpoolFiles, alive } from "./spool-files.ts";

/** Lines per segment: a segment is deleted only when all of it is written, so not too many to redo after a crash. */
const SEGMENT_LINES = 20_000;

export class SpoolSegments<T> {
  /** Sealed or adopted segments, oldest first, with their line counts; the open one is `current`. */
  private readonly sealed: { path: string; lines: number; at: number }[] = [];
  private current: { path: string; lines: number; at: number; fh?: FileHandle } | undefined;
  private waiting: { line: string; resolve(k: Kept): void }[] = [];
  private io: Promise<void> = Promise.resolve();
  private seq = 0;
  private draining: Promise<number> | undefined;

  private readonly files: SpoolFiles;

  private constructor(private readonly dir: string, name: string, private readonly log?: Logger, private readonly segmentLines = SEGMENT_LINES, store?: string) {
    this.files = new SpoolFiles(dir, name, store, log);
  }

  /** Open the segments in `dir`, adopting those that gone processes left there for the same `store` (spool-identity.ts). */
  static async open<T>(dir: string, name: string, log?: Logger, segmentLines = SEGMENT_LINES, store?: string): Promise<SpoolSegments<T>> {
    const s = new SpoolSegments<T>(dir, name, log, segmentLines, store);
    await s.adopt();
    return s;
  }

  /** When the oldest segment was begun (ms), or undefined when none waits. */
  get oldestAt(): number | undefined {
    return this.sealed[0]?.at ?? (this.current?.lines ? this.current.at : undefined);
  }

  /** Records waiting in segments. */
  get size(): number {
    return this.sealed.reduce((n, s) => n + s.lines, 0) + (this.current?.lines ?? 0) + this.waiting.length;
  }

  append(item: T): Promise<Kept> {
    return new Promise<Kept>((resolve) => {
      this.waiting.push({ line: JSON.stringify(item) + "\n", resolve });
      if (this.waiting.length === 1) setImmediate(() => (this.io = this.io.then(() => this.flush())));
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0);
    if (!batch.length) return;
    let kept: Kept = "durable";
    try {
      if (!this.current) {
        mkdirSync(this.dir, { recursive: true });
        const at = Date.now();
        this.current = { path: join(this.dir, `${this.files.base}.${process.pid}.${at}-${++this.seq}.seg`), lines: 0, at };
      }
      this.current.fh ??= await open(this.current.path, "a");
      await this.current.fh.write(batch.map((w) => w.line).join(""));
      await this.current.fh.datasync();
      this.current.lines += batch.length;
      if (this.current.lines >= this.segmentLines) await this.seal();
    } catch (err) {
      // Nowhere durable to put them: the caller keeps them in memory (its spool) instead.
      kept = "memory";
      this.log?.error("spool segments: cannot write to disk", { dir: this.dir, error: String(err) });
    }
    for (const w of batch) w.resolve(kept);
  }

  private async seal(): Promise<void> {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    await c.fh?.close();
    if (c.lines) this.sealed.push({ path: c.path, lines: c.lines, at: c.at });
  }

  /**
   * Hand every record in the segments to `write`, oldest segment first, `batchSize` at a time; a segment is deleted
   * once all of it is written. Rejects with the first failing batch's error (that segment stays, whole).
   */
  drain(write: (batch: T[]) => Promise<void>, batchSize = 500): Promise<number> {
    return (this.draining ??= this.drainAll(write, batchSize).finally(() => (this.draining = undefined)));
  }

  private async drainAll(write: (batch: T[]) => Promise<void>, batchSize: number): Promise<number> {
    await this.adopt();
    // The open segment is sealed first (appends after this go to a new one).
    await (this.io = this.io.then(() => this.seal()));
    let written = 0;
    while (this.sealed.length) {
      const seg = this.sealed[0]!;
      let batch: T[] = [];
      const lines = createInterface({ input: createReadStream(seg.path, "utf8"), crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line) continue;
          try {
            batch.push(JSON.parse(line) as T);
          } catch {
            continue; // a line cut by a crash: never acknowledged (append resolves after the fsync)
          }
          if (batch.length >= batchSize) {
            await write(batch);
            batch = [];
          }
        }
        if (batch.length) await write(batch);
      } finally {
        lines.close();
      }
      await unlink(seg.path).catch((err) => { if (err.code !== "ENOENT") throw err; });
      this.sealed.shift();
      written += seg.lines;
    }
    return written;
  }

  /**
   * Take over the segments of processes that are gone (and our own from an earlier life with the same pid); also on
   * every writer tick, so a replica that died after this one started has its segments written and counted.
   */
  async adopt(): Promise<void> {
    const known = new Set([...this.sealed.map((s) => s.path), this.current?.path]);
    for (const { file: n, pid, match } of this.files.ours(/^(?:adopted-)?(\d+)-[\w-]+\.seg$/)) {
      const path = join(this.dir, n);
      if (known.has(path)) continue;
      if (pid !== process.pid && alive(pid)) continue;
      const at = Number(match[1]);
      const mine = join(this.dir, `${this.files.base}.${process.pid}.adopted-${at}-${++this.seq}.seg`);
      try {
        renameSync(path, mine);
      } catch {
        continue; // another process took it
      }
      this.sealed.push({ path: mine, lines: await countLines(mine), at });
      this.log?.info("spool segments: adopted the records of a process that is gone", { file: n });
    }
  }

  async close(): Promise<void> {
    await (this.io = this.io.then(() => this.flush()).then(() => this.seal()));
  }
}

async function countLines(path: string): Promise<number> {
  let n = 0;
  const lines = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity });
  for await (const line of lines) if (line) n++;
  return n;
}

