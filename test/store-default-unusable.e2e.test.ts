// A config without store: runs on the SQLite file ./data/gateway.db beside it. Where that file cannot be made (a
// read-only ConfigMap mount, a directory the service user cannot write, a config read from a pipe), check and start
// both refuse, saying the config has no store: section, where the default went, why it cannot be made there and what
// to write, and neither creates anything. A SQLite directory below /dev/fd (a config read from <(...)) is an error,
// not a loop at 100% CPU.
import { describe, expect, it } from "vitest";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { CLI_BIN } from "./helpers/cli.ts";

const CONFIG = YAML.stringify({
  providers: { sim: { protocol: "sim" } },
  models: { "acme/m1": { endpoints: [{ provider: "sim", model: "echo" }] } },
});
const WHAT_TO_WRITE = "add store: { kind: sqlite, path: /a/writable/dir/gateway.db } to the config, or store: { kind: memory } " +
  "to run as before (nothing kept: spend, the ledger and API-created keys are lost at exit)";

/** A shell command line, run with the CLI's path in $CLI and node's in $NODE; killed (SIGKILL) after 20 s. */
function sh(script: string, opts: { input?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync("bash", ["-c", script], {
    encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL", stdio: [opts.input ?? "ignore", "pipe", "pipe"],
    env: { ...process.env, LOG_LEVEL: "silent", CLI: CLI_BIN, NODE: process.execPath },
  });
}

const START = "start --port 0 --metrics-port 0 --host 127.0.0.1 --no-watch";

function configDir(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "mg-store-unusable-"));
  const file = join(dir, "gw.yaml");
  writeFileSync(file, CONFIG);
  return { dir, file };
}

describe.skipIf(process.platform === "win32")("a config without store: whose default SQLite file cannot be made", () => {
  it("./data is a file beside the config: check and start refuse with the same words, naming the default and what to write", () => {
    const { dir, file } = configDir();
    writeFileSync(join(dir, "data"), "not a directory\n");
    const expected = `${file}:1:1: store (sqlite): the config has no store: section, so it runs on the default SQLite store ` +
      `${join(dir, "data/gateway.db")}, which cannot be created (${join(dir, "data")} is a file, not a directory): ${WHAT_TO_WRITE}`;
    const checked = sh(`exec "$NODE" "$CLI" check "${file}"`);
    expect(checked.stdout).toBe(`${expected}\n`);
    expect(checked.status).toBe(1);
    const started = sh(`exec "$NODE" "$CLI" ${START} --config "${file}"`);
    expect(started.stderr).toContain(expected);
    expect(started.status).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["data", "gw.yaml"]);
  });

  it("a config read from a pipe (<(...)): check and start refuse the default, telling to name store:, and end", () => {
    const { file } = configDir();
    for (const command of ["check", START]) {
      const r = sh(`exec "$NODE" "$CLI" ${command} --config <(cat "${file}")`);
      expect(r.signal, `${command} was killed: it did not end`).toBe(null);
      expect(r.stdout + r.stderr).toMatch(new RegExp(
        `/dev/fd/\\d+:1:1: store \\(sqlite\\): the config has no store: section and is read from /dev/fd/\\d+ \\(a pipe or a device, not a file in a directory\\), ` +
        `so the default SQLite store \\./data/gateway\\.db has no place beside it: add store: \\{ kind: sqlite, path: /a/writable/dir/gateway\\.db \\}`));
      expect(r.status).toBe(1);
    }
    expect(existsSync("/dev/fd/data")).toBe(false);
  });

  it("check --config /dev/stdin with a file on stdin: the default would go under /dev, so it is refused", () => {
    const { file } = configDir();
    const fd = openSync(file, "r");
    try {
      const r = sh(`exec "$NODE" "$CLI" check --config /dev/stdin`, { input: fd });
      expect(r.stdout).toContain("/dev/stdin:1:1: store (sqlite): the config has no store: section and is read from /dev/stdin (a file under /dev), so the default SQLite store");
      expect(r.status).toBe(1);
    } finally {
      closeSync(fd);
    }
    expect(existsSync("/dev/data")).toBe(false);
  });

  it("an explicit relative store.path in a config read from a pipe: start ends, refusing it and asking for an absolute path", () => {
    const { file } = configDir();
    writeFileSync(file, `store: { kind: sqlite, path: ./data/gw.db }\n${CONFIG}`);
    const r = sh(`exec "$NODE" "$CLI" ${START} --config <(cat "${file}")`);
    expect(r.signal, "start was killed: it did not end").toBe(null);
    expect(r.stderr).toMatch(/\/dev\/fd\/\d+:1:\d+: store\.path: \.\/data\/gw\.db is a relative path, but the config is read from \/dev\/fd\/\d+ \(a pipe or a device, not a file in a directory\), which has no directory to resolve it against: write an absolute path/);
    expect(r.status).toBe(1);
  });
});

// A read-only mount (a Kubernetes ConfigMap) needs a mount namespace of its own: unshare -m, as root (CI runs as root).
const canMount = process.getuid?.() === 0 && spawnSync("unshare", ["-m", "true"]).status === 0;

describe.skipIf(!canMount)("a config without store: on a read-only mount (needs root and unshare -m)", () => {
  it("check and start both refuse, saying the directory is on a read-only file system and what to write", () => {
    const root = mkdtempSync(join(tmpdir(), "mg-store-ro-"));
    const src = join(root, "src"), mnt = join(root, "cm");
    mkdirSync(src);
    mkdirSync(mnt);
    writeFileSync(join(src, "gw.yaml"), CONFIG);
    const inMount = (command: string) => sh(`exec unshare -m bash -c 'set -e; mount --make-rprivate /; mount --bind -o ro "${src}" "${mnt}"; exec "$NODE" "$CLI" ${command}'`);
    const file = join(mnt, "gw.yaml");
    const expected = `${file}:1:1: store (sqlite): the config has no store: section, so it runs on the default SQLite store ` +
      `${join(mnt, "data/gateway.db")}, which cannot be created (the directory ${mnt} is on a read-only file system (EROFS)): ${WHAT_TO_WRITE}`;
    const checked = inMount(`check "${file}"`);
    expect(checked.stdout).toBe(`${expected}\n`);
    expect(checked.status).toBe(1);
    const started = inMount(`${START} --config "${file}"`);
    expect(started.stderr).toContain(expected);
    expect(started.status).toBe(1);
    expect(readdirSync(src)).toEqual(["gw.yaml"]);
  });
});
