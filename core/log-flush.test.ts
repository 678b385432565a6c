// The logger's synchronous flush on a real sonic-boom: it writes everything out where it can, and returns where the
// destination refuses (a pipe whose reader left, a pipe nobody drains) instead of retrying for ever.
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { boundFlushSync } from "./log-flush.ts";

const fifo = () => {
  const f = join(mkdtempSync(join(tmpdir(), "mg-flush-")), "p");
  execFileSync("mkfifo", [f]);
  return f;
};

/** A sonic-boom on `fd` that keeps what it is given buffered (nothing reaches fd until a flush). */
function buffered(fd: number) {
  const dest = boundFlushSync(pino.destination({ dest: fd, sync: false, minLength: 16_000 }));
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

  it("returns after a bounded wait when the pipe stays full (EAGAIN)", () => {
    const f = fifo();
    const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK); // open, never read
    const fd = openSync(f, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      for (;;) writeSync(fd, "x".repeat(4096)); // until the pipe is full
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe("EAGAIN");
    }
    const dest = buffered(fd);
    for (const l of lines(10)) dest.write(l);
    dest.flushSync(); // returning is what is checked (after BUSY_TRIES waits)
    closeSync(fd);
    closeSync(reader);
  });
});
