// `model-gateway start` on a SQLite file whose header is valid but whose pages are damaged: refused by the
// integrity check (quick_check), run as a real process. The refusal leaves nothing beside the file, and never
// touches the lock of a gateway that serves it.
import { describe, expect, it } from "vitest";
import { closeSync, mkdtempSync, openSync, readdirSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runCli } from "../test/helpers/cli.ts";
import { SqliteStore } from "./store/sqlite.ts";
import { sqliteGatewayYaml } from "./store/sqlite-gateway-yaml.testkit.ts";
import { holdServingLock } from "./store/sqlite-process-lock.ts";

/** A gateway store with pages of filler, some overwritten: the file opens, its schema reads, quick_check fails. */
async function damagedStore(path: string): Promise<void> {
  await new SqliteStore(path).close();
  const db = new Database(path);
  db.exec("CREATE TABLE filler(x TEXT)");
  const add = db.prepare("INSERT INTO filler VALUES (?)");
  for (let i = 0; i < 200; i++) add.run("y".repeat(1000));
  db.close(); // the last connection: the WAL is checkpointed into the file and removed
  const size = statSync(path).size;
  const fd = openSync(path, "r+");
  writeSync(fd, Buffer.alloc(16 * 1024, 0x5a), 0, 16 * 1024, size - 64 * 1024); // filler pages, not the schema's
  closeSync(fd);
}

const start = (config: string) => runCli(["start", "--config", config, "--port", "0", "--no-watch"]);

describe("start refused by the integrity check of its SQLite file", () => {
  it("says the file is damaged (exit 1) and removes the lock it took", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-damaged-"));
    const config = sqliteGatewayYaml(dir);
    await damagedStore(join(dir, "gw.db"));
    const refused = await start(config);
    expect(refused.stderr).toMatch(/the SQLite file \S+gw\.db is damaged \(quick_check: /);
    expect(refused.status).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["gw.db", "gw.yaml"]); // no gw.db.lock
  });

  it("leaves the lock of a gateway serving the file where it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-damaged-"));
    const config = sqliteGatewayYaml(dir);
    await damagedStore(join(dir, "gw.db"));
    const serving = holdServingLock(join(dir, "gw.db")); // another process's lock, as a second start sees it
    try {
      const refused = await start(config);
      expect(refused.stderr).toContain("another gateway process is serving");
      expect(refused.status).toBe(1);
      expect(readdirSync(dir)).toContain("gw.db.lock");
    } finally {
      serving.release();
    }
  });
});
