import { describe, expect, it } from "vitest";
import { chmodSync, chownSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
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

// The edits below run in a child process as a user who cannot write the file's directory, so the lock goes to the
// temp directory and the file is written in place: as `nobody` (through setpriv) when the tests run as root, as CI
// does, else as this user with the directory made read-only.
const root = process.getuid?.() === 0;
const hasSetpriv = spawnSync("setpriv", ["--version"]).status === 0;
const NOBODY = Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout) || 65534;
const asOther = root ? `setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups ` : "";
const EDIT = `import { writeSync } from "node:fs";
const { lockedEdit, inPlaceIo } = await import(${JSON.stringify(fileURLToPath(new URL("./locked-edit.ts", import.meta.url)))});
const [file, mode, waitMs] = process.argv.slice(2);
if (mode !== "grow") {
  // The first write at the file's start (after the new tail) goes half-way, then the disk fails: once, or for good
  // ("restore-fails": the old text cannot be written back either).
  let failed = 0;
  inPlaceIo.write = (fd, buf, off, len, pos) => {
    if (pos === 0 && failed === 0) { failed++; return writeSync(fd, buf, off, Math.ceil(len / 2), pos); }
    if (failed === 1 || (failed > 1 && mode === "restore-fails")) { failed++; throw Object.assign(new Error("i/o error"), { code: "EIO" }); }
    return writeSync(fd, buf, off, len, pos);
  };
}
const change = mode === "grow" ? (t) => t + "      - { id: k2, sha256: \\"" + "e".repeat(64) + "\\" }\\n" : (t) => t.replace("demo:", "renamed:");
try {
  await lockedEdit(file, change, { waitMs: Number(waitMs) });
} catch (err) {
  process.stderr.write(err.constructor.name + ": " + err.message + "\\n");
  process.exit(1);
}
`;

/** A gateway.yaml of `size` bytes in a directory the other user cannot write, and the script that edits it. */
function readOnlyDirWith(size: number) {
  const d = dir();
  const file = join(d, "gateway.yaml");
  const head = "projects:\n  demo:\n    keys:\n      - { id: k1, sha256: \"" + "a".repeat(64) + "\" }\n";
  const tail = "    allow_models: [\"*\"]\n";
  writeFileSync(file, head + "# " + "p".repeat(size - head.length - tail.length - 3) + "\n" + tail);
  writeFileSync(join(d, "edit.mjs"), EDIT);
  if (root) chownSync(file, NOBODY, NOBODY);
  chmodSync(d, 0o555); // root ignores this, `nobody` does not own the directory: neither can make a file there
  return { d, file, script: join(d, "edit.mjs"), before: readFileSync(file, "utf8") };
}
const edit = (script: string, file: string, mode: string, prefix = "", env: Record<string, string> = {}) =>
  spawnSync("bash", ["-c", `${prefix}exec ${asOther}${process.execPath} --import tsx ${script} ${file} ${mode} 500`],
    { encoding: "utf8", env: { ...process.env, ...env }, timeout: 20_000 });

describe.skipIf(root && !hasSetpriv)("lockedEdit written in place (a directory the user cannot write)", () => {
  it("a write that runs out of room part-way (file size limit, as a full disk or quota) leaves the file as it was", () => {
    const { file, script, before } = readOnlyDirWith(4060);
    // ulimit -f 4: no write past 4096 bytes (EFBIG), so the added key fits only in part.
    const r = edit(script, file, "grow", "ulimit -f 4; ");
    expect(r.stderr).toMatch(/^LockedEditError: cannot write \S+gateway\.yaml: .*\(EFBIG\); the file was left as it was\n$/);
    expect(r.status).toBe(1);
    expect(readFileSync(file, "utf8")).toBe(before);
    // With room, the same edit goes through.
    expect(edit(script, file, "grow")).toMatchObject({ status: 0, stderr: "" });
    expect(readFileSync(file, "utf8")).toBe(before + `      - { id: k2, sha256: "${"e".repeat(64)}" }\n`);
  });

  it("a write failing after it began over the old text puts the old text back", () => {
    const { file, script, before } = readOnlyDirWith(300);
    const r = edit(script, file, "fails-once");
    expect(r.stderr).toMatch(/^LockedEditError: cannot write \S+gateway\.yaml: .*\(EIO\); the file was left as it was\n$/);
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("when the old text cannot be put back either, says so and where a copy of it is", () => {
    const { file, script, before } = readOnlyDirWith(300);
    const r = edit(script, file, "restore-fails");
    expect(r.status).toBe(1);
    const saved = /putting its previous text back failed too \(.*\(EIO\)\), so it may be cut short: its previous text is saved in (\S+)\n$/.exec(r.stderr)?.[1];
    expect(saved, r.stderr).toBeDefined();
    expect(readFileSync(saved!, "utf8")).toBe(before);
    unlinkSync(saved!);
  });
});

describe.skipIf(!root || !hasSetpriv)("lockedEdit and another user's stale lock (needs root and setpriv)", () => {
  it("a dead command's lock in the temp directory that this user cannot remove: the wait ends in one line naming it", () => {
    const { file, script, before } = readOnlyDirWith(300);
    // A sticky temp directory (as /tmp) holding root's lock, left by a process that is gone: `nobody` cannot delete it.
    const tmp = dir();
    chmodSync(tmp, 0o1777);
    const lock = join(tmp, `model-gateway-${createHash("sha256").update(file).digest("hex").slice(0, 16)}.lock`);
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(lock, JSON.stringify({ pid: Number(dead), host: hostname(), at: Date.now() }));
    const started = Date.now();
    const r = edit(script, file, "grow", "", { TMPDIR: tmp });
    // It spun at full CPU past any wait, until the 20 s timeout killed it.
    expect(r.signal).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.stderr).toBe(`LockBusyError: ${lock} was left by an edit that is gone (pid ${dead} on ${hostname()}) and this user cannot remove it; delete ${lock} and try again\n`);
    expect(r.status).toBe(1);
    expect(readFileSync(file, "utf8")).toBe(before);
    expect(readdirSync(tmp).filter((f) => !f.startsWith("tsx-"))).toEqual([basename(lock)]); // no .takeover guard left
  }, 30_000);
});
