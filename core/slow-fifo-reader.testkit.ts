// A slow reader of a FIFO, for the log tests: it takes `bytesPerSecond` (a read every 100 ms) until every writer has
// closed its end, so the pipe stays full while the writers wait on it.
import { readSync } from "node:fs";

/** Everything read from the non-blocking FIFO `reader` (an fd) until its writers have all gone. */
export function readSlowly(reader: number, bytesPerSecond: number): Promise<Buffer> {
  const out: Buffer[] = [];
  return new Promise<Buffer>((done) => {
    const tick = setInterval(() => {
      const buf = Buffer.alloc(bytesPerSecond / 10);
      let n: number;
      try {
        n = readSync(reader, buf);
      } catch {
        return; // EAGAIN: nothing written yet
      }
      if (n > 0) return void out.push(buf.subarray(0, n));
      clearInterval(tick); // end of the pipe: the writers have gone
      done(Buffer.concat(out));
    }, 100);
  });
}
