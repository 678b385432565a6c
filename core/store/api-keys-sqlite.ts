// API keys on SQLite (store kind sqlite): one row per key, written through the store's group commit (durable before
// the key is shown). One process per file, so the change counter lives in that process.
import type Database from "better-sqlite3";
import { patched, rotationRefused, type ApiKeyStore, type KeyPatch, type RotateResult, type StoredKey } from "./api-keys-types.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS api_keys (sha256 TEXT PRIMARY KEY, project TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL, UNIQUE (project, id));
CREATE TABLE IF NOT EXISTS api_key_uses (sha256 TEXT PRIMARY KEY, at INTEGER NOT NULL);
`;

export class SqliteApiKeyStore implements ApiKeyStore {
  private readonly stmts;
  private changes = 0;

  constructor(db: Database.Database, private readonly enqueue: (write: () => void) => Promise<void>) {
    db.exec(SCHEMA);
    this.stmts = {
      all: db.prepare("SELECT record FROM api_keys"),
      get: db.prepare("SELECT record FROM api_keys WHERE sha256 = ?"),
      insert: db.prepare("INSERT OR IGNORE INTO api_keys (sha256, project, id, record) VALUES (?, ?, ?, ?)"),
      update: db.prepare("UPDATE api_keys SET record = ? WHERE sha256 = ?"),
      touch: db.prepare("INSERT INTO api_key_uses (sha256, at) VALUES (?, ?) ON CONFLICT (sha256) DO UPDATE SET at = MAX(at, excluded.at)"),
      uses: db.prepare("SELECT sha256, at FROM api_key_uses"),
    };
  }

  async list(): Promise<StoredKey[]> {
    return (this.stmts.all.all() as { record: string }[]).map((r) => JSON.parse(r.record));
  }

  async get(sha256: string): Promise<StoredKey | undefined> {
    const row = this.stmts.get.get(sha256) as { record: string } | undefined;
    return row && JSON.parse(row.record);
  }

  async create(key: StoredKey): Promise<boolean> {
    let added = false;
    await this.enqueue(() => { added = this.stmts.insert.run(key.sha256, key.project, key.id, JSON.stringify(key)).changes === 1; });
    if (added) this.changes++;
    return added;
  }

  async update(sha256: string, patch: KeyPatch): Promise<StoredKey | undefined> {
    let out: StoredKey | undefined;
    // Read and write inside the same transaction: no other write runs between them.
    await this.enqueue(() => {
      const row = this.stmts.get.get(sha256) as { record: string } | undefined;
      if (!row) return;
      out = patched(JSON.parse(row.record), patch);
      this.stmts.update.run(JSON.stringify(out), sha256);
    });
    if (out) this.changes++;
    return out;
  }

  async rotate(sha256: string, fresh: StoredKey, patch: KeyPatch): Promise<RotateResult> {
    let out: RotateResult = { ok: false, reason: "missing" };
    // Check, insert and update in one transaction: of concurrent rotations only the first finds the key unreplaced.
    await this.enqueue(() => {
      const row = this.stmts.get.get(sha256) as { record: string } | undefined;
      const old: StoredKey | undefined = row && JSON.parse(row.record);
      const refused = rotationRefused(old);
      if (refused) return void (out = refused);
      if (this.stmts.insert.run(fresh.sha256, fresh.project, fresh.id, JSON.stringify(fresh)).changes !== 1) return void (out = { ok: false, reason: "taken" });
      const previous = patched(old!, patch);
      this.stmts.update.run(JSON.stringify(previous), sha256);
      out = { ok: true, previous };
    });
    if (out.ok) this.changes++;
    return out;
  }

  async version(): Promise<string> {
    return String(this.changes);
  }

  async touch(used: Map<string, number>): Promise<void> {
    if (!used.size) return;
    await this.enqueue(() => {
      for (const [h, at] of used) this.stmts.touch.run(h, Math.round(at));
    });
  }

  async lastUsed(): Promise<Map<string, number>> {
    return new Map((this.stmts.uses.all() as { sha256: string; at: number }[]).map((r) => [r.sha256, Number(r.at)]));
  }
}
