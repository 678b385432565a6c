// A start on a SQLite file that another program holds locked (a sqlite3 shell, a backup tool with a transaction open)
// said only "store (sqlite): database is locked": the refusal now names the file and why, as for a read-only one.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStore } from "./index.ts";
import { ConfigError, formatProblem } from "../config/source.ts";

/** Another process with a write transaction open on `db` (in WAL mode, as the gateway leaves it) until killed. */
async function otherProcessLocking(db: string) {
  const child = spawn(process.execPath, ["-e",
    `const Database = require("better-sqlite3"); const db = new Database(${JSON.stringify(db)}); db.pragma("journal_mode = WAL");
     db.exec("CREATE TABLE IF NOT EXISTS t (x)"); db.exec("BEGIN EXCLUSIVE"); db.exec("INSERT INTO t VALUES (1)");
     console.log("held"); setInterval(() => {}, 1000);`],
    { stdio: ["ignore", "pipe", "inherit"], cwd: process.cwd() });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d) => String(d).includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
  });
  return child;
}

describe("start on a SQLite file another process holds locked", () => {
  it("is refused naming the file and why, not only 'database is locked'", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-locked-"));
    const file = join(dir, "gateway.yaml");
    writeFileSync(file, "store: { kind: sqlite, path: ./gateway.db }\n");
    const db = join(dir, "gateway.db");
    const other = await otherProcessLocking(db);
    try {
      const config = { kind: "sqlite" as const, path: "./gateway.db" };
      const opened = createStore(config, dir, file, { timeoutMs: 100, verify: { integrity: "quick", requirePersistence: true, epochFile: join(dir, "epochs.json") } });
      const err = await opened.then((s) => s.close(), (e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      const said = (err as ConfigError).problems.map(formatProblem).join("\n");
      expect(said).toBe(`${file}:1:1: store (sqlite): cannot open ${db}: another process holds a lock on it (SQLite: database is locked), ` +
        "such as a sqlite3 shell or a backup with a transaction open on the file: end that transaction, or give this gateway another store.path");
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
  }, 30_000);
});
