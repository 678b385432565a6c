// makeDirs: mkdir -p that ends. Node's recursive mkdirSync spins for ever under /proc/self/fd (mkdir says ENOENT there).
import { describe, expect, it } from "vitest";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeDirs } from "./make-dirs.ts";

describe("makeDirs", () => {
  it("makes every missing directory, and again is a no-op", () => {
    const root = mkdtempSync(join(tmpdir(), "mg-make-dirs-"));
    makeDirs(join(root, "a/b/c"));
    makeDirs(join(root, "a/b/c"));
    expect(statSync(join(root, "a/b/c")).isDirectory()).toBe(true);
  });

  it.skipIf(process.platform !== "linux")("under a directory that takes no new entries (/proc/self/fd): an error naming it, not a loop", () => {
    expect(() => makeDirs("/proc/self/fd/data/spool")).toThrow("cannot create the directory /proc/self/fd/data: /proc/self/fd takes no new directories (ENOENT)");
  });

  it("below a file: an error naming the file (ENOTDIR)", () => {
    const root = mkdtempSync(join(tmpdir(), "mg-make-dirs-"));
    writeFileSync(join(root, "f"), "");
    expect(() => makeDirs(join(root, "f/x"))).toThrow(expect.objectContaining({ code: "ENOTDIR", message: `cannot create the directory ${join(root, "f")}: ${join(root, "f")} is a file, not a directory (ENOTDIR)` }));
  });
});
