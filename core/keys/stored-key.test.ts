// `model-gateway check` and `keys new/rotate --config` read the keys of the store gateway.yaml names: a SQLite file
// only through a read-only connection (never migrated, never locked against the gateway serving it), and a store a
// newer release wrote stops the command with nothing written.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "../store/sqlite.ts";
import { loadConfig } from "../config/load.ts";
import { readStoredKeys } from "./stored-key.ts";
import { keysCommand } from "./keys-command.ts";
import type { StoredKey } from "../store/api-keys-types.ts";
import { sqliteGatewayYaml } from "../store/sqlite-gateway-yaml.testkit.ts";

const KEY = { sha256: "b".repeat(64), project: "acme", id: "ci", createdAt: Date.UTC(2026, 10, 1) } as StoredKey;

function setup(): { dir: string; file: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), "mg-stored-key-"));
  return { dir, file: sqliteGatewayYaml(dir), db: join(dir, "gw.db") };
}

/** A file as the previous release left it: a stored key, no schema version and no rollup high-water mark. */
async function olderReleaseFile(path: string): Promise<void> {
  const s = new SqliteStore(path, { fsync: false });
  await s.apiKeys.create(KEY);
  await s.close();
  const db = new Database(path);
  db.exec("DELETE FROM meta WHERE name IN ('schema_version', 'rollup_rowid')");
  db.close();
}

const metaOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries((db.prepare("SELECT name, value FROM meta").all() as { name: string; value: string }[]).map((r) => [r.name, r.value]));
  } finally {
    db.close();
  }
};

afterEach(() => vi.restoreAllMocks());

describe("reading the keys of the store gateway.yaml names", () => {
  it("reads an older release's SQLite file while a gateway holds its write lock, and leaves it as it was", async () => {
    const { dir, file, db } = setup();
    await olderReleaseFile(db);
    const before = metaOf(db);
    // The serving gateway in the middle of a write: a command that migrated the file would wait for it (and then
    // hold the lock itself, failing the gateway's requests).
    const gateway = new Database(db);
    gateway.exec("BEGIN IMMEDIATE");
    try {
      const t0 = Date.now();
      const { keys, unchecked } = await readStoredKeys(await loadConfig(file, { onNotice: () => {} }));
      expect(unchecked).toBeUndefined();
      expect(keys?.map((k) => `${k.project}/${k.id}`)).toEqual(["acme/ci"]);
      expect(Date.now() - t0).toBeLessThan(2_000);
    } finally {
      gateway.exec("ROLLBACK");
      gateway.close();
    }
    expect(metaOf(db)).toEqual(before); // not stamped, no rollups rebuilt
    void dir;
  });

  it("keys new --config on a store a newer release wrote: refused with a clear message, exit 1, gateway.yaml unchanged", async () => {
    const { file, db } = setup();
    await new SqliteStore(db, { fsync: false }).close();
    const raw = new Database(db);
    raw.exec("UPDATE meta SET value = '99' WHERE name = 'schema_version'");
    raw.close();
    const yaml = readFileSync(file, "utf8");
    let out = "", err = "";
    vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    const code = await keysCommand(["new", "--config", file, "--project", "acme", "--id", "fresh"]);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(err).toContain("was written by a newer release (schema 99");
    expect(err).toContain("was not changed");
    expect(out).not.toContain("mg_live_");
    expect(readFileSync(file, "utf8")).toBe(yaml);
  });
});
