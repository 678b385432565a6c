// `model-gateway usage` reading a SQLite file: one that is not there, or one another process keeps locked, is an
// error naming the file — never an all-zero table, never SQLite's bare "database is locked".
import { afterEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "./sqlite.ts";
import { openSqliteForReport } from "./sqlite-report.ts";

const QUERY = { since: 0, until: Date.now() + 3_600_000, groupBy: ["project" as const], bucket: "none" as const, includeSandbox: false };
const closers: (() => unknown)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

describe("openSqliteForReport", () => {
  it("refuses a file that is not there, naming it and where its path came from, and makes none", () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-report-")), "gw.db");
    expect(() => openSqliteForReport(path, 1_000, 'store.path "./gw.db" in /x/gateway.yaml, relative to its directory'))
      .toThrow(`no SQLite file at ${path} (store.path "./gw.db" in /x/gateway.yaml, relative to its directory): `);
    expect(existsSync(path)).toBe(false);
  });

  it("refuses a store kept in memory: its ledger is only inside the gateway", () => {
    expect(() => openSqliteForReport(":memory:", 1_000)).toThrow("the SQLite store is in memory (store.path \":memory:\"): its ledger lives only inside the running gateway");
  });

  it("names the file another process keeps locked past the wait", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-report-")), "gw.db");
    await new SqliteStore(path, {}).close();
    // A process holding the file exclusively (a sqlite3 shell with locking_mode=EXCLUSIVE after a write, say).
    const holder = new Database(path);
    closers.push(() => holder.close());
    holder.pragma("locking_mode = EXCLUSIVE");
    holder.exec("CREATE TABLE held (a)");
    expect(() => openSqliteForReport(path, 20)).toThrow(`cannot read ${path}: database is locked: another process kept it locked past this command's wait (0.02 s); try again once it lets go`);
  });

  it("names a path that is there but is no SQLite file: a directory, a text file", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-report-"));
    const folder = join(dir, "gw.db");
    mkdirSync(folder);
    expect(() => openSqliteForReport(folder, 1_000)).toThrow(`cannot read ${folder}: it is a directory, not a SQLite file`);
    const text = join(dir, "notes.db");
    writeFileSync(text, "store.path points here by mistake\n".repeat(10));
    expect(() => openSqliteForReport(text, 1_000)).toThrow(`cannot read ${text}: file is not a database`);
  });

  it("reads a file that is there (no records: no rows)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-report-")), "gw.db");
    await new SqliteStore(path, {}).close();
    const report = openSqliteForReport(path, 1_000);
    closers.push(() => void report.close());
    expect(await report.usage(QUERY)).toEqual([]);
  });
});
