// The logger's synchronous flush on a real sonic-boom: it writes everything out where it can, and returns where the
// destination refuses (a pipe whose reader left, a pipe nobody drains) instead of retrying for ever.
import { describe, expect, it } from "vitest";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pino from "pino";
import { SonicBoom } from "sonic-boom";
import { boundFlushSync } from "./log-flush.ts";
import { readSlowly as readFifoSlowly } from "./slow-fifo-reader.testkit.ts";

const fifo = () => {
  const f = join(mkdtempSync(join(tmpdir(), "mg-flush-")), "p");
  execFileSync("mkfifo", [f]);
  return f;
};

/** A sonic-boom on `fd` that keeps what it is given buffered (nothing reaches fd until a flush). */
function buffered(fd: number, noProgressMs?: number) {
  const dest = boundFlushSync(pino.destination({ dest: fd, sync: false, minLength: 16_000 }), { noProgressMs });
  dest.on("error", () => {}); // a refused asynchronous write is not this test's business
  return dest;
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i} ${"x".repeat(200)}\n`);

describe("flushSync of the logger's destination", () => {
  it("writes every buffered line, in order", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-flush-")), "log");
    const fd = openSync(file, "w");
    const dest = buffered(fd);
    for (const l of lines(70)) dest.write(l); // ~15 KB
    expect(readFileSync(file, "utf8")).toBe(""); // still held
    dest.flushSync();
    expect(readFileSync(file, "utf8")).toBe(lines(70).join(""));
    closeSync(fd);
  });

  it("returns, dropping the lines, when the pipe's reader has gone (EPIPE)", () => {
    const f = fifo();
    const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
    const fd = openSync(f, constants.O_WRONLY);
    closeSync(reader);
    const dest = buffered(fd);
    for (const l of lines(10)) dest.write(l);
    dest.flushSync(); // returning is what is checked: sonic-boom's own flushSync retries here for ever
    dest.flushSync(); // nothing left to try
    closeSync(fd);
  });

  it("returns after a bounded wait when the pipe stays full (EAGAIN) and nobody reads it", () => {
    const f = fifo();
    const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK); // open, never read
    const fd = openSync(f, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      for (;;) writeSync(fd, "x".repeat(4096)); // until the pipe is full
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe("EAGAIN");
    }
    const dest = buffered(fd, 300);
    for (const l of lines(10)) dest.write(l);
    dest.flushSync(); // returning is what is checked (after 300 ms without a byte taken)
    closeSync(fd);
    closeSync(reader);
  });
});

/** A pipe (FIFO) filled to the brim: its non-blocking writing end, and its reading end to empty it from. */
function fullPipe() {
  const f = fifo();
  const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
  const fd = openSync(f, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    for (;;) writeSync(fd, "-".repeat(4096));
  } catch { /* EAGAIN: full */ }
  /** Reads everything in the pipe now (at most `max` bytes). */
  const take = (max = Infinity) => {
    const out: Buffer[] = [];
    let got = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(65_536, max - got));
      if (!buf.length) break;
      let n = 0;
      try {
        n = readSync(reader, buf);
      } catch { break; } // EAGAIN: empty
      if (n <= 0) break;
      out.push(buf.subarray(0, n));
      got += n;
    }
    return Buffer.concat(out).toString();
  };
  return { fd, take, close: () => (closeSync(fd), closeSync(reader)) };
}

describe("a chunk sonic-boom is still writing when the flush comes", () => {
  /** A destination on a full pipe that has started writing its first chunk and waits to retry it (EAGAIN). */
  async function waitingToRetry(pipe: ReturnType<typeof fullPipe>, freeFirst: number) {
    let retrying!: () => void;
    const retried = new Promise<void>((r) => (retrying = r));
    const dest = boundFlushSync(pino.destination({ dest: pipe.fd, sync: false, minLength: 4096, retryEAGAIN: () => (retrying(), true) }));
    dest.on("error", () => {});
    if (freeFirst) pipe.take(freeFirst); // room for part of the chunk: a partial write, then EAGAIN on the rest
    const all = lines(60); // ~12 KB: one chunk in flight, the rest queued behind it
    for (const l of all) dest.write(l);
    await retried;
    return { dest, all };
  }

  for (const [name, freeFirst] of [["waiting to retry", 0], ["partly written", 4096]] as const) {
    it(`is written by the flush, whole, before the lines queued behind it (${name})`, async () => {
      const pipe = fullPipe();
      const { dest, all } = await waitingToRetry(pipe, freeFirst);
      const before = pipe.take(); // the filler (and the chunk's written part): room for everything else
      dest.flushSync();
      const text = (before + pipe.take()).replace(/^-+/, "");
      expect(text).toBe(all.join(""));
      pipe.close();
    });
  }
});

// The sonic-boom internals the flush works on (core/log-flush.ts): a sonic-boom upgrade that renames or changes one
// fails here, not as lost log lines at some shutdown.
describe("sonic-boom's fields the flush relies on", () => {
  it("are there, with the meaning it expects, before and during a write", async () => {
    const pipe = fullPipe();
    let retrying!: () => void;
    const retried = new Promise<void>((r) => (retrying = r));
    const dest = new SonicBoom({ fd: pipe.fd, sync: false, minLength: 100, retryEAGAIN: () => (retrying(), true) });
    dest.on("error", () => {});
    const b = dest as unknown as Record<string, unknown>;
    expect({ fd: b.fd, destroyed: b.destroyed, sync: b.sync, _bufs: b._bufs, _writingBuf: b._writingBuf, _writing: b._writing, _len: b._len })
      .toEqual({ fd: pipe.fd, destroyed: false, sync: false, _bufs: [], _writingBuf: "", _writing: false, _len: 0 });
    expect([typeof b.release, typeof b._actualWrite, typeof b.retryEAGAIN, typeof b.flushSync]).toEqual(["function", "function", "function", "function"]);
    const calls: string[] = [];
    const release = b.release as (...a: unknown[]) => void;
    const actualWrite = b._actualWrite as () => void;
    b.release = (...a: unknown[]) => (calls.push("release"), release(...a)); // read from the instance at each write
    b._actualWrite = () => (calls.push("_actualWrite"), actualWrite.call(dest));
    dest.write("a".repeat(150)); // over minLength: a background write of this chunk starts
    expect(calls).toEqual(["_actualWrite"]);
    expect({ _writing: b._writing, _writingBuf: b._writingBuf, _len: b._len }).toEqual({ _writing: true, _writingBuf: "a".repeat(150), _len: 150 });
    dest.write("b".repeat(10)); // queued behind it, counted in _len
    expect({ _bufs: b._bufs, _len: b._len }).toEqual({ _bufs: ["b".repeat(10)], _len: 160 });
    await retried; // the pipe is full: EAGAIN, the chunk kept for a retry
    expect(calls).toEqual(["_actualWrite", "release"]);
    expect({ _writing: b._writing, _writingBuf: b._writingBuf, _len: b._len }).toEqual({ _writing: true, _writingBuf: "a".repeat(150), _len: 160 });
    dest.destroy();
    pipe.close();
  });
});

// The gateway's own logger in a process that logs, closes the log and exits, its stderr a pipe to a slow reader.
describe("a process that logs to a slow reader, then closes the log and exits", () => {
  const N = 300;
  const child = `
const { createLogger } = await import(${JSON.stringify(resolve("core/log.ts"))});
const log = createLogger({ access: true });
for (let i = 0; i < ${N}; i++) {
  log.infoJson("request", JSON.stringify({ seq: i, pad: "x".repeat(600) }));
  if (i % 20 === 0) await new Promise((r) => setTimeout(r, 5));
}
await log.close();
process.exit(0);`;

  /** A line's seq, or what it is when it is no whole JSON line. */
  const seqOf = (line: string): unknown => {
    try {
      return JSON.parse(line).seq;
    } catch {
      return `not JSON: ${line.slice(0, 30)}…${line.slice(-30)}`;
    }
  };

  /** Everything the child writes to stderr (a pipe, as `| reader` makes), read at `bytesPerSecond`, a tenth every 100 ms. */
  async function readSlowly(bytesPerSecond: number): Promise<{ status: number | null; text: string }> {
    const f = fifo();
    const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(f, constants.O_WRONLY);
    const { LOG_LEVEL: _, ...env } = process.env;
    const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", child], { stdio: ["ignore", "ignore", writer], env });
    closeSync(writer); // the child's copy is the only one: the pipe ends when it exits
    const exited = once(p, "exit") as Promise<[number | null]>;
    const read = await readFifoSlowly(reader, bytesPerSecond);
    closeSync(reader);
    const [status] = await exited;
    return { status, text: read.toString() };
  }

  for (const bps of [20_000, 60_000]) {
    it(`gets every line to a reader taking ${bps / 1000} KB/s, whole and in order`, async () => {
      const { status, text } = await readSlowly(bps);
      const got = text.split("\n");
      expect(got.pop()).toBe(""); // the last line ends with its newline
      expect(got.map(seqOf)).toEqual(Array.from({ length: N }, (_, i) => i));
      expect(status).toBe(0);
    }, 120_000);
  }
});
