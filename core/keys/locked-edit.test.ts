import { describe, expect, it } from "vitest";
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
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

  it("a stale lock met by several commands at once is taken over by one at a time: no edit is lost", async () => {
    // Each waiter decides the dead holder's lock is stale, then removes it: one that removed it after another had
    // already made its own lock in its place let two edits run at once, and one key was lost.
    const d = dir();
    const rounds = 30, procs = 6;
    const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
    for (let r = 0; r < rounds; r++) {
      writeFileSync(join(d, `g${r}.yaml`), "keys:\n");
      writeFileSync(join(d, `g${r}.yaml.lock`), JSON.stringify({ pid: dead, host: hostname(), at: Date.now() }));
    }
    const script = join(d, "edit.mts");
    writeFileSync(script, `import { lockedEdit } from ${JSON.stringify(fileURLToPath(new URL("./locked-edit.ts", import.meta.url)))};
const [dir, id, go, rounds, gap] = process.argv.slice(2).map((x, i) => (i ? Number(x) : x));
for (let r = 0; r < rounds; r++) {
  while (Date.now() < go + r * gap) { /* every process meets the stale lock at the same instant */ }
  await lockedEdit(dir + "/g" + r + ".yaml", async (t) => { await new Promise((res) => setTimeout(res, 2)); return t + "- k" + id + "\\n"; }, { waitMs: 20_000 });
}
`);
    const go = Date.now() + 3000; // after every process has loaded
    const runs = Array.from({ length: procs }, (_, i) => new Promise<number | null>((res) => {
      const child = spawn(process.execPath, ["--import", "tsx", script, d, String(i), String(go), String(rounds), "150"], { stdio: ["ignore", "ignore", "inherit"] });
      child.once("exit", res);
    }));
    expect(await Promise.all(runs)).toEqual(Array(procs).fill(0));
    const lost = [];
    for (let r = 0; r < rounds; r++) {
      const kept = readFileSync(join(d, `g${r}.yaml`), "utf8").match(/k\d/g)?.length ?? 0;
      if (kept !== procs) lost.push(`round ${r}: ${kept} of ${procs}`);
    }
    expect(lost).toEqual([]);
    expect(readdirSync(d).filter((f) => f.includes(".lock") || f.endsWith(".tmp") || f.endsWith(".old"))).toEqual([]);
  }, 60_000);
});
