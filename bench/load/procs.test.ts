// The load harness's per-process counters, read from /proc.
import { describe, expect, it } from "vitest";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syscalls } from "./procs.ts";

describe("syscalls", () => {
  it("counts this process's write system calls as they happen", () => {
    const file = join(tmpdir(), `mg-procs-${process.pid}.txt`);
    const fd = openSync(file, "w");
    const before = syscalls(process.pid);
    for (let i = 0; i < 20; i++) writeSync(fd, "x");
    const after = syscalls([process.pid]);
    closeSync(fd);
    unlinkSync(file);
    expect(after.writes - before.writes).toBeGreaterThanOrEqual(20);
    expect(after.reads).toBeGreaterThanOrEqual(before.reads);
  });

  it("is NaN with no process, or one that is gone", () => {
    expect(syscalls(undefined).writes).toBeNaN();
    expect(syscalls(2 ** 30).reads).toBeNaN();
  });
});
