// A synchronous flush of the logger's buffered lines that always returns. sonic-boom's own flushSync (4.2.1) retries
// every failed write but EAGAIN/EBUSY for ever, 100 ms apart: when the log's reader has gone (a dead `| tee`, a
// logging driver or journald restarting) each write fails with EPIPE and the process that flushes — at a shutdown, a
// refusal to start, its exit — never gets past it, its event loop blocked, deaf to signals. Here a write the
// destination refuses (EPIPE, EIO, ENOSPC, ...) drops what is buffered, and a busy one is retried a bounded number
// of times. pino's own exit hook calls the destination's flushSync, so this replaces it on the instance.
import { writeSync } from "node:fs";

/** The sonic-boom fields a flush works on (utf8 mode: queued chunks are strings, a partly written one a Buffer). */
interface Buffered {
  fd: number;
  destroyed: boolean;
  _bufs: (string | Buffer)[];
  _writingBuf: string | Buffer;
  /** An asynchronous write of _writingBuf is in flight: it finishes on its own. */
  _writing: boolean;
  _len: number;
}

/** How long a busy destination (EAGAIN: a full pipe to a slow reader) may hold a flush: BUSY_TRIES × BUSY_WAIT_MS. */
const BUSY_TRIES = 10;
const BUSY_WAIT_MS = 100;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes out what `dest` (a sonic-boom) holds, or drops it when the destination refuses it. Never loops for ever. */
export function flushOrDrop(dest: object): void {
  const b = dest as Buffered;
  if (b.destroyed || b.fd < 0) return; // closed, or a file still opening: nothing to write to
  if (!b._writing && b._writingBuf.length > 0) {
    b._bufs.unshift(b._writingBuf);
    b._writingBuf = "";
  }
  let busy = 0;
  while (b._bufs.length) {
    const chunk = b._bufs[0]!;
    try {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      const n = writeSync(b.fd, bytes);
      b._len = Math.max(b._len - n, 0);
      if (n < bytes.length) b._bufs[0] = bytes.subarray(n);
      else b._bufs.shift();
      busy = 0;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === "EAGAIN" || code === "EBUSY") && ++busy <= BUSY_TRIES) {
        Atomics.wait(sleeper, 0, 0, BUSY_WAIT_MS);
        continue;
      }
      // Nobody will take these lines: drop them (an asynchronous write in flight still counts its own bytes).
      b._bufs.length = 0;
      b._len = b._writing ? Buffer.byteLength(b._writingBuf) : 0;
      return;
    }
  }
}

/** Makes `dest.flushSync()` (ours, and pino's at exit) this bounded flush. */
export function boundFlushSync<T extends { flushSync(): void }>(dest: T): T {
  dest.flushSync = () => flushOrDrop(dest);
  return dest;
}
