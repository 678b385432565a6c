// `model-gateway check` on a SQLite store.path that start refuses, run as a real process (and in process, where a
// test plays a user who may not write).
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../test/helpers/cli.ts";
import { storePathCheck } from "./cli-check-store.ts";
import type { FsProbe } from "./store/sqlite-open-error.ts";

function configIn(dir: string, path: string): string {
  const f = join(dir, "gateway.yaml");
  writeFileSync(f, `# a SQLite store\nstore: { kind: sqlite, path: ${path} }\n`);
  return f;
}

describe("check on a SQLite store.path", () => {
  it("refuses a directory, at the store: line (exit 1), as start does, and leaves nothing behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    mkdirSync(join(dir, "adir"));
    const f = configIn(dir, "./adir");
    const r = await runCli(["check", f]);
    expect(r.stdout).toBe(`${f}:2:1: store (sqlite): cannot open ${join(dir, "adir")}: it is a directory, not a file: store.path names the database file\n`);
    expect(r.status).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["adir", "gateway.yaml"]);
    const started = await runCli(["start", "--config", f, "--port", "0", "--no-watch"]);
    expect(started.stderr).toContain(r.stdout);
    expect(started.status).toBe(1);
  });

  it("refuses a file that is not a database (exit 1), as start does, and neither leaves anything behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    writeFileSync(join(dir, "afile"), "notes, not a database\n");
    const f = configIn(dir, "./afile");
    const r = await runCli(["check", f]);
    expect(r.stdout).toMatch(new RegExp(`^${f}:2:1: store \\(sqlite\\): the SQLite file ${join(dir, "afile")} is damaged \\(file is not a database\\)\\. `));
    expect(r.status).toBe(1);
    const started = await runCli(["start", "--config", f, "--port", "0", "--no-watch"]);
    expect(started.stderr).toContain(r.stdout);
    expect(started.status).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["afile", "gateway.yaml"]); // no afile.lock
  });

  it("refuses a path below a file, and passes a path to be created without creating it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    writeFileSync(join(dir, "afile"), "");
    const below = configIn(dir, "./afile/gateway.db");
    const r = await runCli(["check", below]);
    expect(r.stdout).toBe(`${below}:2:1: store (sqlite): cannot open ${join(dir, "afile/gateway.db")}: ${join(dir, "afile")} is a file, not a directory\n`);
    expect(r.status).toBe(1);

    const fine = configIn(dir, "./data/gateway.db");
    const ok = await runCli(["check", fine]);
    expect(ok.stdout).toMatch(/: ok \(/);
    expect(ok.status).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["afile", "gateway.yaml"]);
  });
});

describe("check on the default SQLite file (a config without store:), in process", () => {
  // This user may not write the config's directory (a service user's /etc/model-gateway): start would refuse.
  const deniedToThisUser: FsProbe = {
    access(p) {
      throw Object.assign(new Error(`EACCES: permission denied, access '${p}'`), { code: "EACCES" });
    },
    kind: (p) => (existsSync(p) ? (statSync(p).isDirectory() ? "dir" : "file") : undefined),
  };

  it("a directory this user cannot write is a problem naming the default and what to write, not a note", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    const f = join(dir, "gateway.yaml");
    writeFileSync(f, "models: {}\n");
    const r = storePathCheck({ kind: "sqlite" }, dir, f, true, deniedToThisUser);
    expect(r.note).toBeUndefined();
    expect(r.problem).toEqual({
      file: f, line: 1, column: 1,
      message: `store (sqlite): the config has no store: section, so it runs on the default SQLite store ${join(dir, "data/gateway.db")}, which cannot be created ` +
        `(the directory ${dir} is not writable by this process (uid ${process.getuid?.() ?? "?"}) (EACCES)): add store: { kind: sqlite, path: /a/writable/dir/gateway.db } ` +
        "to the config, or store: { kind: memory } to run as before (nothing kept: spend, the ledger and API-created keys are lost at exit)",
    });
    expect(readdirSync(dir)).toEqual(["gateway.yaml"]);
  });

  it("a default file already there that only this user may not open (another user's live store) is a note, not a problem", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    const f = join(dir, "gateway.yaml");
    writeFileSync(f, "models: {}\n");
    const { SqliteStore } = await import("./store/sqlite.ts");
    const db = new SqliteStore(join(dir, "data/gateway.db"));
    await db.close();
    const r = storePathCheck({ kind: "sqlite" }, dir, f, true, deniedToThisUser);
    expect(r.problem).toBeUndefined();
    expect(r.note).toContain(`start run by this user would refuse the store: cannot open ${join(dir, "data/gateway.db")}`);
  });

  it("the same directory named in store: stays a note (start may run as the gateway's own user)", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-check-store-"));
    const f = join(dir, "gateway.yaml");
    writeFileSync(f, "store: { kind: sqlite }\n");
    const r = storePathCheck({ kind: "sqlite" }, dir, f, false, deniedToThisUser);
    expect(r.problem).toBeUndefined();
    expect(r.note).toContain(`start run by this user would refuse the store: cannot open ${join(dir, "data/gateway.db")}: the directory ${dir} is not writable`);
  });
});
