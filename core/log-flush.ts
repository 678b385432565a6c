// A synchronous flush of the logger's buffered lines that always returns, and writes every line, whole and in order,
// to a reader that is still reading. sonic-boom's own flushSync (4.2.1) retries every failed write but EAGAIN/EBUSY
// for ever, 100 ms apart: when the log's reader has gone (a dead `| tee`, a logging driver or journald restarting)
// each write fails with EPIPE and the process that flushes — at a shutdown, a refusal to start, its exit — never gets
// past it, its event loop blocked, deaf to signals. Here a write the destination refuses (EPIPE, EIO, ENOSPC, ...)
// drops what is buffered; a full pipe (EAGAIN: a slow reader) is waited on for as long as its reader keeps taking
// bytes, and given up only after NO_PROGRESS_MS without one byte taken (a reader still open but no longer reading).
//
// sonic-boom writes in the background (fs.write) and, when the pipe is full, retries its chunk (_writingBuf, after a
// partial write the unwritten rest) from a 100 ms timer that never fires after process.exit. That retry is run here
// instead, so a flush knows whether the chunk is waiting (it then writes the chunk first, then the queue) or its write
// is in flight (whenIdle() says when it has come back). Each queued chunk goes in one write(2), never merged with the
// next: to a pipe core/log.ts keeps chunks to whole lines of at most PIPE_BUF bytes, so each lands whole (atomic).
// pino's own exit hook calls the destination's flushSync, so this replaces it on the instance.
import { write as fsWrite, writeSync } from "node:fs";

/** The sonic-boom fields a flush works on (utf8 mode: queued chunks are strings, a partly written one a Buffer). */
export interface Buffered {
  fd: number;
  destroyed: boolean;
  sync: boolean;
  _opening?: boolean;
  /** Lines queued behind the chunk being written. */
  _bufs: (string | Buffer)[];
  /** The chunk being written (what is left of it after a partial write), "" when none. */
  _writingBuf: string | Buffer;
  /** A chunk is being written: its write is in flight, or waiting to retry. */
  _writing: boolean;
  /** Bytes not written yet: _writingBuf's and _bufs'. */
  _len: number;
  /** Called with each background write's outcome; read from the instance at every write. */
  release: (err: NodeJS.ErrnoException | null | undefined, n?: number) => void;
  /** Starts a background write of the next chunk. */
  _actualWrite: () => void;
  retryEAGAIN: (err: Error, writing: number, queued: number) => boolean;
}

/** sonic-boom's wait before writing again to a full pipe. */
const RETRY_MS = 100;
/** How long a flush waits on a destination that takes no byte (a reader open but not reading) before dropping. */
export const NO_PROGRESS_MS = 10_000;
/** A flush's wait between tries on a full pipe. */
const BUSY_WAIT_MS = 20;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** What the flush knows of a destination's background write. */
interface Tracked {
  /** A background write was issued and has not come back. */
  inFlight: boolean;
  /** The chunk's retry after a full pipe, when one is waiting. */
  retry?: NodeJS.Timeout;
  /** Called once no write is in flight. */
  idle: (() => void)[];
  noProgressMs: number;
}

const tracked = new WeakMap<object, Tracked>();

/** Writes out what `dest` (a sonic-boom) holds, or drops it when the destination refuses it. Never loops for ever. */
export function flushOrDrop(dest: object, noProgressMs = tracked.get(dest)?.noProgressMs ?? NO_PROGRESS_MS): void {
  const b = dest as Buffered;
  if (b.destroyed || b.fd < 0) return; // closed, or a file still opening: nothing to write to
  const t = tracked.get(dest);
  if (t?.retry) {
    // The chunk waits on its retry timer: it is written here, first (the timer would not fire after an exit).
    clearTimeout(t.retry);
    t.retry = undefined;
    b._writing = false;
  }
  if (!b._writing && b._writingBuf.length > 0) {
    b._bufs.unshift(b._writingBuf);
    b._writingBuf = "";
  }
  let lastProgress = Date.now();
  while (b._bufs.length) {
    const chunk = b._bufs[0]!;
    try {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      const n = writeSync(b.fd, bytes);
      b._len = Math.max(b._len - n, 0);
      if (n < bytes.length) b._bufs[0] = bytes.subarray(n);
      else b._bufs.shift();
      if (n > 0) lastProgress = Date.now();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === "EAGAIN" || code === "EBUSY") && Date.now() - lastProgress < noProgressMs) {
        Atomics.wait(sleeper, 0, 0, BUSY_WAIT_MS); // a slow reader: wait while it reads
        continue;
      }
      // Nobody will take these lines: drop them (a write in flight still counts its own bytes).
      b._bufs.length = 0;
      b._len = b._writing ? Buffer.byteLength(b._writingBuf) : 0;
      return;
    }
  }
}

/**
 * Resolves once `dest` has no background write in flight (then a flush cannot overtake or cut one), or after the
 * no-progress bound (a write to a blocking pipe nobody reads never comes back).
 */
export function whenIdle(dest: object): Promise<void> {
  const t = tracked.get(dest);
  if (!t?.inFlight) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, t.noProgressMs);
    timer.unref();
    t.idle.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Makes `dest.flushSync()` (ours, and pino's at exit) this flush, and runs the chunk's retry after a full pipe here
 * (sonic-boom's own: the same write, RETRY_MS later) so a flush can take it over.
 */
export function boundFlushSync<T extends { flushSync(): void }>(dest: T, opts: { noProgressMs?: number } = {}): T {
  const b = dest as unknown as Buffered;
  const t: Tracked = { inFlight: false, idle: [], noProgressMs: opts.noProgressMs ?? NO_PROGRESS_MS };
  tracked.set(dest, t);
  dest.flushSync = () => flushOrDrop(dest);
  if (b.sync) return dest; // its writes are synchronous: none is ever pending
  const release = b.release;
  const actualWrite = b._actualWrite;
  const settled = () => {
    t.inFlight = b._writing && !b._opening; // sonic-boom went on to write the rest, or the next chunk
    if (!t.inFlight) for (const resolve of t.idle.splice(0)) resolve();
  };
  b._actualWrite = () => {
    actualWrite.call(b);
    t.inFlight = true;
  };
  b.release = (err, n) => {
    t.inFlight = false;
    const busy = err && (err.code === "EAGAIN" || err.code === "EBUSY");
    if (busy && b.retryEAGAIN(err, b._writingBuf.length, b._len - b._writingBuf.length)) {
      t.retry = setTimeout(() => {
        t.retry = undefined;
        t.inFlight = true;
        const chunk = b._writingBuf;
        if (typeof chunk === "string") fsWrite(b.fd, chunk, b.release);
        else fsWrite(b.fd, chunk, b.release);
      }, RETRY_MS);
      for (const resolve of t.idle.splice(0)) resolve(); // nothing in flight: a flush may take the chunk over
      return;
    }
    release(err, n);
    settled();
  };
  return dest;
}
