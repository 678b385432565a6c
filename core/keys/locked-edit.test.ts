import { describe, expect, it } from "vitest";
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { lockedEdit, LockBusyError } from "./locked-edit.ts";

const dir = () => mkdtempSync(join(tmpdir(), "mg-lock-"));
const tick = () => new Promise((r) => setTimeout(r, 5));

describe("lockedEdit", () => {
  it("runs concurrent edits one after another, so each keeps its change, and leaves no lock or temp file", async () => {
    const d = dir();
    const file = join(d, "gateway.yaml");
    writeFileSync(file, "keys:\n");
    // Each edit reads, waits (as a look at the store does), then writes: without the lock all but one are lost.
    await Promise.all(Array.from({ length: 8 }, (_, i) => lockedEdit(file, async (t) => {
      await tick();
      return `${t}  - k${i}\n`;
    })));
    expect(readFileSync(file, "utf8").match(/k\d/g)?.sort()).toEqual(["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"]);
    expect(readdirSync(d)).toEqual(["gateway.yaml"]);
  });

  it("replaces the symlink's target, keeping the link and the file's mode", async () => {
    const d = dir();
    const real = join(d, "real.yaml");
    writeFileSync(real, "a: 1\n");
    chmodSync(real, 0o640);
    const link = join(d, "gateway.yaml");
    symlinkSync(real, link);
    await lockedEdit(link, (t) => t + "b: 2\n");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe("a: 1\nb: 2\n");
    expect(statSync(real).mode & 0o777).toBe(0o640);
  });

  it("an edit that throws writes nothing and frees the lock", async () => {
    const d = dir();
    const file = join(d, "gateway.yaml");
    writeFileSync(file, "a: 1\n");
    await expect(lockedEdit(file, () => { throw new Error("no such project"); })).rejects.toThrow("no such project");
    expect(readFileSync(file, "utf8")).toBe("a: 1\n");
    await lockedEdit(file, (t) => t + "b: 2\n", { waitMs: 100 });
    expect(readFileSync(file, "utf8")).toBe("a: 1\nb: 2\n");
  });

  it("waits a bounded time for a live holder, then says who holds it; takes over the lock of a process that is gone", async () => {
    const d = dir();
    const file = join(d, "gateway.yaml");
    writeFileSync(file, "a: 1\n");
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now() }));
    const err = await lockedEdit(file, (t) => t + "x\n", { waitMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockBusyError);
    expect(err.message).toContain(`pid ${process.pid}`);
    expect(readFileSync(file, "utf8")).toBe("a: 1\n");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: Number(dead), host: hostname(), at: Date.now() }));
    await lockedEdit(file, (t) => t + "b: 2\n", { waitMs: 200 });
    expect(readFileSync(file, "utf8")).toBe("a: 1\nb: 2\n");
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
