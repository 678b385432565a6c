import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteOpenProblem, type FsProbe } from "./sqlite-open-error.ts";
import { createStore } from "./index.ts";
import { ConfigError } from "../config/source.ts";

/** A file system holding `dirs` and `files`, where access() fails with `denied[path]`. */
function fakeFs(dirs: string[], files: string[], denied: Record<string, string>): FsProbe {
  return {
    kind: (p) => (dirs.includes(p) ? "dir" : files.includes(p) ? "file" : undefined),
    access(p) {
      if (denied[p]) throw Object.assign(new Error(denied[p]), { code: denied[p] });
    },
  };
}

describe("sqliteOpenProblem", () => {
  it("names the file and what the file system refuses: a read-only mount, a directory it may not write", () => {
    expect(sqliteOpenProblem("/srv/ro/gw.db", fakeFs(["/", "/srv", "/srv/ro"], [], { "/srv/ro": "EROFS" })))
      .toBe("cannot open /srv/ro/gw.db: the directory /srv/ro is on a read-only file system (EROFS)");
    // An existing ledger on a read-only mount.
    expect(sqliteOpenProblem("/srv/ro/gw.db", fakeFs(["/", "/srv", "/srv/ro"], ["/srv/ro/gw.db"], { "/srv/ro": "EROFS", "/srv/ro/gw.db": "EROFS" })))
      .toBe("cannot open /srv/ro/gw.db: the file /srv/ro/gw.db is on a read-only file system (EROFS)");
    // A directory still to be made, in one this user may not write.
    expect(sqliteOpenProblem("/srv/data/sub/gw.db", fakeFs(["/", "/srv"], [], { "/srv": "EACCES" })))
      .toMatch(/^cannot open \/srv\/data\/sub\/gw\.db: the directory \/srv is not writable by this process \(uid \S+\) \(EACCES\)$/);
    expect(sqliteOpenProblem("/srv/gw.db", fakeFs(["/", "/srv"], [], {}))).toBeUndefined(); // nothing to say: SQLite's own error stands
  });

  it("opening a store on a directory, or below a file, says so instead of 'unable to open database file'", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-sqlite-open-"));
    mkdirSync(join(dir, "ledger.db"));
    writeFileSync(join(dir, "afile"), "");
    const config = join(dir, "gateway.yaml");
    writeFileSync(config, "models: {}\nstore: { kind: sqlite, path: ./ledger.db }\n");
    const problem = (path: string, verify: boolean) =>
      createStore({ kind: "sqlite", path }, dir, config, verify ? { verify: { integrity: "off", requirePersistence: false, epochFile: join(dir, "epoch") } } : {}).then(
        () => "opened",
        (err: unknown) => (err instanceof ConfigError ? err.problems[0]!.message : String(err)),
      );
    for (const verify of [false, true]) {
      expect(await problem("./ledger.db", verify)).toBe(`store (sqlite): cannot open ${join(dir, "ledger.db")}: it is a directory, not a file: store.path names the database file`);
      expect(await problem("./afile/gw.db", verify)).toBe(`store (sqlite): cannot open ${join(dir, "afile/gw.db")}: ${join(dir, "afile")} is a file, not a directory`);
    }
  });
});
