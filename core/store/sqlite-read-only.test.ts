import { afterEach, describe, expect, it, vi } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteForReading, readOnlyOpenProblem, type ReadOnlyProbe } from "./sqlite-read-only.ts";
import { createStore } from "./index.ts";
import { usageCommand } from "./usage-command.ts";

const probe = (o: Partial<ReadOnlyProbe>): ReadOnlyProbe => ({ walMode: () => true, unwritable: () => "EACCES", exists: () => false, ...o });
const readonlyErr = Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY_DIRECTORY" });

describe("readOnlyOpenProblem", () => {
  it("a WAL file in a directory this user may not write: says SQLite needs the -shm there, and what to do", () => {
    expect(readOnlyOpenProblem("/srv/data/gateway.db", readonlyErr, probe({})))
      .toMatch(/^cannot read \/srv\/data\/gateway\.db: it is a WAL-mode SQLite file, and SQLite makes gateway\.db-shm beside it even to read one, but the directory \/srv\/data is not writable by this process \(uid \S+\) \(EACCES\): run this as a user who may write \/srv\/data \(the gateway's own\), or give it a copy of the file in a directory it may write$/);
    // Records still in a -wal file would be missing from a copy of the database file alone.
    expect(readOnlyOpenProblem("/srv/data/gateway.db", readonlyErr, probe({ exists: () => true }))).not.toContain("copy");
  });

  it("anything else keeps SQLite's own error", () => {
    expect(readOnlyOpenProblem("/srv/gw.db", readonlyErr, probe({ walMode: () => false }))).toBeUndefined();
    expect(readOnlyOpenProblem("/srv/gw.db", readonlyErr, probe({ unwritable: () => undefined }))).toBeUndefined();
    expect(readOnlyOpenProblem("/srv/gw.db", Object.assign(new Error("corrupt"), { code: "SQLITE_CORRUPT" }), probe({}))).toBeUndefined();
  });
});

// Root ignores directory permissions, not a read-only mount: a read-only bind of a stopped gateway's data directory.
const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync("umount", [dir]);
  vi.restoreAllMocks();
});
function readOnlyView(dir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const view = mkdtempSync(join(tmpdir(), "mg-ro-view-"));
  try {
    execFileSync("mount", ["--bind", dir, view], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  mounted.push(view);
  execFileSync("mount", ["-o", "remount,ro,bind", view], { stdio: "ignore" });
  return view;
}

describe("usage on a stopped gateway's WAL-mode file in a directory it may not write", () => {
  it("says the directory must be writable, instead of 'unable to open database file'", async (ctx) => {
    const base = mkdtempSync(join(tmpdir(), "mg-ro-wal-"));
    const data = join(base, "data");
    mkdirSync(data);
    const dbPath = join(data, "gateway.db");
    const store = await createStore({ kind: "sqlite", path: dbPath }, base);
    await store.close();
    expect(existsSync(`${dbPath}-wal`) || existsSync(`${dbPath}-shm`)).toBe(false); // stopped: nothing unmerged
    const view = readOnlyView(data);
    if (!view) return ctx.skip("needs root and mount --bind to make a read-only directory");
    const config = join(base, "gateway.yaml");
    writeFileSync(config, `models: {}\nstore: { kind: sqlite, path: ${join(view, "gateway.db")} }\n`);
    const stderr: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => {
      stderr.push(String(s));
      return true;
    });
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);

    expect(await usageCommand(["--config", config])).toBe(1);
    expect(stderr.join("")).toContain(
      `usage: cannot read ${join(view, "gateway.db")}: it is a WAL-mode SQLite file, and SQLite makes gateway.db-shm beside it even to read one, ` +
        `but the directory ${view} is on a read-only file system (EROFS): run this as a user who may write ${view} (the gateway's own), ` +
        "or give it a copy of the file in a directory it may write",
    );
  });
});

describe("openSqliteForReading", () => {
  it("a file nobody has open, opened read-write so its close removes -wal and -shm, still refuses every write", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-for-reading-"));
    const path = join(dir, "gw.db");
    await (await createStore({ kind: "sqlite", path }, dir)).close();
    const db = openSqliteForReading(path, 1_000);
    expect(() => db.exec("CREATE TABLE t(x)")).toThrow(/readonly/);
    db.close();
  });
});
