import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname } from "node:path";

describe("each test file's temp dir", () => {
  it("is its own, under the machine's, open to other users as /tmp is, and the processes a test starts use it", () => {
    const dir = tmpdir();
    expect(dirname(dir)).toBe(process.env.MG_TEST_BASE_TMPDIR);
    expect(basename(dir)).toMatch(/^mg-file-/);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
    expect(execFileSync(process.execPath, ["-p", "require('node:os').tmpdir()"]).toString().trim()).toBe(dir);
  });
});
