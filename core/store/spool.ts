// A durable spool on this machine: records wait in append-only segment files of JSON lines ({k, t, v}), fsync'd
// before append() resolves (appends of one event-loop turn share one write and one fsync), and are drained into a
// sink — the store — when it can take them, read back from disk one batch at a time, oldest first. Memory holds none
// of them, however long the store is away (only each segment's name, counts and read offset): the appends of the
// current turn, the batch a drain has in hand, and — the one exception — records no disk would take (a write
// failed, or was cut short by a disk filling up: a record is on disk only when all of its line is), kept until a
// write succeeds or the sink takes them.
// A drain goes on from the byte after the last record the sink took; a segment is deleted once all of it is written,
// so the sink must be idempotent per key: a crash part way through a segment replays it from its start, and that is
// what makes the replay exactly-once.
// Files are <name>.<store>.<pid>.<ms>-<n>.jsonl, so replicas and workers sharing a directory never write one file; a
// process adopts the files of processes that are gone (a killed worker, a crashed replica, its own previous life)
// when they were written for the same store (spool-files.ts): another store's records are left alone. An earlier
// release's files (<name>.<store>.<pid>.jsonl, the Postgres ledger's .seg overflow) and a shutdown's unsaved-….jsonl
// moved in by hand are adopted and replayed the same way.
// Reusable: the ledger uses it while the store is down; a database writer can spool every record and drain in batches.
import { renameSync } from "node:fs";
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { SpoolFiles, alive } from "./spool-files.ts";
import { count, fileLines, parse, recordOf, type FileLine } from "./spool-lines.ts";
import { makeDirs } from "./make-dirs.ts";

export { alive };

/** Where an appended item is kept: on disk (fsync'd), or only in memory because the disk would not take it. */
export type Kept = "durable" | "memory";

/** Records per segment: a segment is deleted only when all of it is written, so a crash redoes at most this many. */
const SEGMENT_RECORDS = 20_000;

/** After a failed write the disk is tried again this long after (ms), doubling after each failure up to the most. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MOST_MS = 30_000;

/**
 * Spool files after the pid: ours (<ms>-<n>.jsonl), an earlier release's (jsonl, adopt-….jsonl; <ms>-<n>.seg and
 * adopted-….seg hold bare items, one per line), and a shutdown's written-out records (unsaved-<ms>.jsonl).
 */
const FILES = /^(?:([\w-]+)\.)?(jsonl|seg)$/;

/** One spooled record as it is written: the line, and when it was spooled. */
interface Line {
  line: string;
  at: number;
}

interface Segment {
  path: string;
  /** Records in it (lines that parse; for the one appended to, those acknowledged). */
  records: number;
  /** Of them, those this process's drains have written. */
  done: number;
  /** The byte after the last record written: the next drain reads on from there. */
  offset: number;
  /** The segment appended to: the bytes acknowledged (a drain reads no further: a write may be under way). */
  bytes?: number;
  fh?: SegmentFile;
  /** When its first record not yet written was spooled (ms). */
  at: number;
  /** Lines are the items themselves (an earlier release's .seg), not {k, t, v}. */
  bare: boolean;
}

/** What a segment is appended through: the file's handle, or a test's disk that fills up part way. */
export interface SegmentFile {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface SpoolOptions {
  /** Records per segment file (default SEGMENT_RECORDS). */
  segmentRecords?: number;
  /** Opens a new segment file for appending (default: the file, opened to append). */
  openSegment?: (path: string) => Promise<SegmentFile>;
}

export class Spool<T> {
  private readonly files: SpoolFiles;
  private readonly segmentRecords: number;
  private readonly openSegment: (path: string) => Promise<SegmentFile>;
  /** Closed segments waiting to be drained, oldest first. */
  private readonly segments: Segment[] = [];
  /** The segment appends go to, newest of all; drained up to what was acknowledged. */
  private current: Segment | undefined;
  /** Appends of this event-loop turn, written together. */
  private waiting: (Line & { resolve(kept: Kept): void })[] = [];
  /** Records no disk took (a write failed), newest of all; written first by the next write that succeeds. */
  private held: Line[] = [];
  /** The batch a drain has read from disk and handed to the sink. */
  private inHand = { records: 0, bytes: 0 };
  /** File work (appends, closing a segment) one at a time. */
  private io: Promise<void> = Promise.resolve();
  private draining: Promise<number> | undefined;
  private seq = 0;
  /** Files with our own pid are an earlier life's only before we first write: taken at open, never after. */
  private ownTaken = false;
  /** Since the last write failed: how long until the disk is tried again (0: it took the last write), and when. */
  private retry = { ms: 0, at: 0, timer: undefined as NodeJS.Timeout | undefined };

  private constructor(readonly dir: string, name: string, private readonly log?: Logger, store?: string, o: SpoolOptions = {}) {
    this.files = new SpoolFiles(dir, name, store, log);
    this.segmentRecords = o.segmentRecords ?? SEGMENT_RECORDS;
    this.openSegment = o.openSegment ?? ((path) => open(path, "a"));
  }

  /**
   * Open the spool in `dir` (created when first written), adopting what earlier or dead processes left there for the
   * same `store` (spool-identity.ts: the tag of the store the items are drained into).
   */
  static async open<T>(dir: string, name: string, log?: Logger, store?: string, o?: SpoolOptions): Promise<Spool<T>> {
    const s = new Spool<T>(dir, name, log, store, o);
    await s.adopt();
    return s;
  }

  /** Records waiting: on disk, in this turn's appends, and held in memory. */
  get size(): number {
    let n = this.waiting.length + this.held.length + left(this.current);
    for (const s of this.segments) n += left(s);
    return n;
  }

  /** ms since the epoch of the oldest item waiting, or undefined when none is. */
  get oldestAt(): number | undefined {
    for (const s of this.segments) if (left(s)) return s.at;
    return left(this.current) ? this.current!.at : (this.held[0]?.at ?? this.waiting[0]?.at);
  }

  /**
   * What memory holds of the spooled records now (bytes: their JSON lines' length): this turn's appends, the batch a
   * drain has in hand, and those no disk took. The bound of the spool's heap, for tests and the curious.
   */
  get inMemory(): { records: number; bytes: number } {
    let bytes = this.inHand.bytes;
    for (const l of this.waiting) bytes += l.line.length;
    for (const l of this.held) bytes += l.line.length;
    return { records: this.waiting.length + this.held.length + this.inHand.records, bytes };
  }

  /** The items no disk took (a write failed: they are in memory only). Synchronous, for an exit that cannot wait. */
  heldInMemory(): T[] {
    return this.held.map((l) => parse<T>(l.line, false)!.item);
  }

  /** Keep `item` until it is drained; resolves once it is on disk ("durable") or could only be kept in memory. */
  append(key: string, item: T): Promise<Kept> {
    const at = Date.now();
    const line = JSON.stringify({ k: key, t: at, v: item }) + "\n";
    return new Promise<Kept>((resolve) => {
      this.waiting.push({ line, at, resolve });
      if (this.waiting.length === 1) setImmediate(() => (this.io = this.io.then(() => this.flush())));
    });
  }

  /** Try the disk once more for the items held in memory (now, backoff or not); those it still would not take. */
  async saveHeld(): Promise<T[]> {
    await (this.io = this.io.then(() => this.flush(true)));
    return this.heldInMemory();
  }

  /**
   * Write this turn's appends, after what is held. While a failed write's backoff runs they are held without trying
   * the disk (`now`: try it anyway — at close, and for a last chance at shutdown).
   */
  private async flush(now = false): Promise<void> {
    const batch = this.waiting.splice(0);
    if (!batch.length && !this.held.length) return;
    if (!now && this.retry.ms && Date.now() < this.retry.at) {
      this.held.push(...batch);
      for (const w of batch) w.resolve("memory");
      return;
    }
    let kept: Kept = "durable";
    try {
      // What no disk took before goes first: the files keep the order of the appends.
      await this.write([...this.held, ...batch]);
      if (this.retry.ms) this.log?.info("spool: the disk takes records again; those held in memory are written", { dir: this.dir, records: this.held.length });
      this.held = [];
      this.retried();
    } catch (err) {
      kept = "memory";
      this.held.push(...batch);
      this.backOff(err);
    }
    for (const w of batch) w.resolve(kept);
  }

  /** A write failed: the next try waits (longer each time), and the failure is said once per wait. */
  private backOff(err: unknown): void {
    this.retry.ms = Math.min(this.retry.ms ? this.retry.ms * 2 : RETRY_FIRST_MS, RETRY_MOST_MS);
    this.retry.at = Date.now() + this.retry.ms;
    this.log?.error("spool: cannot write to disk; records kept in memory until the disk or the store takes them", { dir: this.dir, held: this.held.length, retryInMs: this.retry.ms, error: String(err) });
    clearTimeout(this.retry.timer);
    // Tried again then even if nothing is appended meanwhile: held records are lost if the process dies.
    this.retry.timer = setTimeout(() => {
      this.retry.timer = undefined;
      if (this.held.length) this.io = this.io.then(() => this.flush());
    }, this.retry.ms).unref();
  }

  private retried(): void {
    clearTimeout(this.retry.timer);
    this.retry = { ms: 0, at: 0, timer: undefined };
  }

  /**
   * Append to the current segment (begun when there is none) and fsync; a full one is closed. All or nothing: a write
   * that fails part way (a disk that fills up takes what fits, then says ENOSPC) fails for every line of it — the
   * caller holds them all — and they are cut back out of the file, so no half record is left with more after it.
   */
  private async write(lines: Line[]): Promise<void> {
    const c = (this.current ??= { path: this.pathFor("jsonl"), records: 0, done: 0, offset: 0, bytes: 0, at: lines[0]!.at, bare: false });
    const data = Buffer.from(lines.map((l) => l.line).join(""));
    try {
      if (!c.fh) {
        makeDirs(this.dir);
        c.fh = await this.openSegment(c.path);
        await syncDir(this.dir); // the new file's name must survive a power cut too
      }
      await writeAll(c.fh, data);
      await c.fh.datasync();
    } catch (err) {
      await this.cutBack(c);
      // Nothing more goes into it after a failure: the next write begins a new segment.
      await this.seal();
      throw err;
    }
    if (!c.records) c.at = lines[0]!.at;
    c.records += lines.length;
    c.bytes! += data.length;
    if (c.records >= this.segmentRecords) await this.seal();
  }

  /**
   * Truncate a segment back to the lines acknowledged before a failed write (a failed fsync too: what it wrote may not
   * be on the disk). When even that fails, the file keeps what the write left — whole lines read again (the sink takes
   * each once) and a cut last line (skipped) — and is sealed: nothing is appended after the cut.
   */
  private async cutBack(c: Segment): Promise<void> {
    if (!c.fh) return;
    try {
      await c.fh.truncate(c.bytes!);
      await c.fh.datasync();
    } catch (err) {
      this.log?.warn("spool: cannot cut a failed write back out of a spool file; its whole lines are replayed too (counted once), a cut one is skipped", { file: c.path, error: String(err) });
    }
  }

  /** A new file name of ours; names sort in the order they were made. */
  private pathFor(ext: string): string {
    return join(this.dir, `${this.files.base}.${process.pid}.${Date.now()}-${String(++this.seq).padStart(6, "0")}.${ext}`);
  }

  /** Close the current segment: it waits to be drained, or is removed when nothing of it is left to write. */
  private async seal(): Promise<void> {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    c.bytes = undefined; // read to its end from now on
    const waits = left(c) > 0;
    if (waits) this.segments.push(c); // the same object: a drain reading it goes on counting in it
    await c.fh?.close().catch(() => {});
    c.fh = undefined;
    if (!waits) await this.remove(c.path);
  }

  /** Delete a segment file (one that was never made is no matter), the deletion made to last. */
  private async remove(path: string): Promise<void> {
    try {
      await unlink(path);
      await syncDir(this.dir); // not replayed again after a power cut (a no-op for the sink, but slow)
    } catch {
      // never made, or the directory is gone: nothing is left to replay from it
    }
  }

  /**
   * Hand every waiting item to `write`, oldest first, in batches read from disk; a segment is deleted once all of it
   * is written. Resolves with how many items were written; rejects with the error of the first batch that fails (it
   * and the rest stay spooled; the next drain goes on from it). One drain at a time; a second call joins.
   */
  drain(write: (batch: T[]) => Promise<void>, batchSize = 200): Promise<number> {
    return (this.draining ??= this.drainAll(write, batchSize).finally(() => (this.draining = undefined)));
  }

  private async drainAll(write: (batch: T[]) => Promise<void>, batchSize: number): Promise<number> {
    await this.adopt();
    let written = 0;
    for (;;) {
      const seg = this.segments[0] ?? (left(this.current) ? this.current : undefined);
      if (seg) written += await this.drainSegment(seg, write, batchSize);
      else if (this.held.length) written += await this.drainHeld(write, batchSize);
      else break;
    }
    // All written: the segment appended to goes too (a crash then has nothing to replay), unless it took more meanwhile.
    await (this.io = this.io.then(() => (this.current && !left(this.current) ? this.seal() : undefined)));
    return written;
  }

  /**
   * Write a segment's records from where the last drain stopped, a batch at a time: up to what was acknowledged for
   * the one appended to; to its end, then deleted, for a closed one.
   */
  private async drainSegment(seg: Segment, write: (batch: T[]) => Promise<void>, batchSize: number): Promise<number> {
    const open = seg === this.current;
    let lines: AsyncGenerator<FileLine>;
    try {
      lines = await fileLines(seg.path, seg.offset, open ? seg.bytes : undefined);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      this.log?.error("spool: a spool file is gone (removed by hand?); its records cannot be replayed", { file: seg.path, records: seg.records - seg.done });
      seg.done = seg.records;
      if (open) await (this.io = this.io.then(() => (this.current === seg ? this.seal() : undefined)));
      else this.segments.splice(this.segments.indexOf(seg), 1);
      return 0;
    }
    let written = 0;
    let batch: T[] = [];
    let bytes = 0;
    let end = seg.offset;
    const send = async () => {
      this.inHand = { records: batch.length, bytes };
      try {
        await write(batch);
      } finally {
        this.inHand = { records: 0, bytes: 0 };
      }
      seg.done += batch.length;
      seg.offset = end;
      written += batch.length;
      batch = [];
      bytes = 0;
    };
    for await (const line of lines) {
      const r = recordOf<T>(line, seg.bare);
      end = line.end;
      if (!r) {
        // The last line cut by a crash was never acknowledged; a line cut elsewhere is said, not passed over unseen.
        if (line.whole) this.log?.warn("spool: skipped a line that holds no record", { file: seg.path, endsAtByte: line.end });
        continue;
      }
      if (!batch.length && r.at !== undefined) seg.at = r.at;
      batch.push(r.item);
      bytes += line.text.length;
      if (batch.length >= batchSize) await send();
    }
    if (batch.length) await send();
    seg.offset = end;
    if (open) return written;
    // Closed: all of it is written (lines past its count too, written but never acknowledged: sent, no matter).
    seg.done = Math.max(seg.done, seg.records);
    const i = this.segments.indexOf(seg);
    if (i >= 0) this.segments.splice(i, 1);
    await this.remove(seg.path);
    return written;
  }

  /** A batch of the items no disk took, straight from memory. */
  private async drainHeld(write: (batch: T[]) => Promise<void>, batchSize: number): Promise<number> {
    const batch = this.held.slice(0, batchSize);
    await write(batch.map((l) => parse<T>(l.line, false)!.item));
    // A write that reached the disk meanwhile took them off already (the sink gets those once more: idempotent).
    for (const l of batch) {
      const i = this.held.indexOf(l);
      if (i >= 0) this.held.splice(i, 1);
    }
    return batch.length;
  }

  /**
   * Take over the files of processes that are gone now (one may have died after open(), or still been a zombie
   * then): their items count in size and are drained with ours, even when nothing of our own waits. The number of
   * items newly taken.
   */
  adoptGone(): Promise<number> {
    return this.adopt();
  }

  /**
   * Take over the files of processes that no longer run, written for our store: rename each to a name of ours (of two
   * processes racing for one, the rename of one fails) and count its records; they are read when drained. Files with
   * our own pid (an earlier process with the same pid: a container's pid 1) are taken once, before we first write.
   */
  private async adopt(): Promise<number> {
    let taken = 0;
    const own = !this.ownTaken;
    this.ownTaken = true;
    for (const { file, pid, match } of this.files.ours(FILES)) {
      if (pid === process.pid ? !own : alive(pid)) continue;
      const ext = match[2]!;
      const path = this.pathFor(ext);
      try {
        renameSync(join(this.dir, file), path);
      } catch {
        continue; // another process took it
      }
      const bare = ext === "seg";
      const { records, at } = await count(path, bare, this.log);
      // A bare segment's lines carry no time: its name does (<ms>-<n>.seg).
      this.segments.push({ path, records, done: 0, offset: 0, at: at ?? (Number(/(\d+)-/.exec(match[1] ?? "")?.[1]) || Date.now()), bare });
      taken += records;
      if (pid !== process.pid) this.log?.info("spool: adopted the records of a process that is gone", { file, records });
    }
    return taken;
  }

  /** Write what waits and close the segment; the files stay for the next process (or this one's next life). */
  async close(): Promise<void> {
    // The last try is now; no retry is left to run after the close.
    await (this.io = this.io.then(() => this.flush(true)).then(() => (clearTimeout(this.retry.timer), this.seal())));
  }
}

/** Write all of `data`: a write may take only part of it (a disk filling up) without failing; the next one says why. */
async function writeAll(fh: SegmentFile, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length; ) {
    const { bytesWritten } = await fh.write(data, at, data.length - at);
    if (bytesWritten <= 0) throw Object.assign(new Error(`spool: the disk took none of the ${data.length - at} bytes left to write`), { code: "ENOSPC" });
    at += bytesWritten;
  }
}

/** Records of a segment not written yet. */
const left = (s: Segment | undefined) => (s ? Math.max(0, s.records - s.done) : 0);

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
