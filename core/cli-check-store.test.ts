// `model-gateway check` on a SQLite store.path that start refuses, run as a real process.
import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../test/helpers/cli.ts";

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
