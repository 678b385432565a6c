// The commands that only read a SQLite store (check, usage, keys list --config), run as real processes on a WAL-mode
// file: the directory holds afterwards what it held before — no -wal or -shm file left beside a file nobody serves,
// and a served file's own left where they are.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../test/helpers/cli.ts";
import { SqliteStore } from "./store/sqlite.ts";
import { sqliteGatewayYaml } from "./store/sqlite-gateway-yaml.testkit.ts";

const commands = (config: string) => [["check", config], ["usage", "--config", config], ["keys", "list", "--config", config]];

describe("a command reading a WAL-mode SQLite store", () => {
  it("leaves no -wal or -shm file beside a file nobody serves", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-read-only-"));
    const config = sqliteGatewayYaml(dir);
    await new SqliteStore(join(dir, "gw.db")).close(); // WAL mode; its last connection closed, so only the file is left
    expect(readdirSync(dir).sort()).toEqual(["gw.db", "gw.yaml"]);
    for (const args of commands(config)) {
      const r = await runCli(args);
      expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 0, stderr: "" });
      expect({ args, files: readdirSync(dir).sort() }).toEqual({ args, files: ["gw.db", "gw.yaml"] });
    }
  });

  it("leaves a served file's -wal and -shm where they are", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-read-only-"));
    const config = sqliteGatewayYaml(dir);
    const served = new SqliteStore(join(dir, "gw.db"));
    try {
      const before = readdirSync(dir).sort();
      expect(before).toEqual(["gw.db", "gw.db-shm", "gw.db-wal", "gw.yaml"]);
      for (const args of commands(config)) {
        const r = await runCli(args);
        expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 0, stderr: "" });
        expect({ args, files: readdirSync(dir).sort() }).toEqual({ args, files: before });
      }
    } finally {
      await served.close();
    }
  });
});
