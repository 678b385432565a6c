// Stored responses in the SQLite file (store kind `sqlite`), in tables of their own beside the ledger: durable
// across restarts. Each save is one small transaction of its own (it runs once per response, after the answer is
// complete); expired rows are invisible to reads and deleted at most once a minute (indexed on expires_at).
import type Database from "better-sqlite3";
import { outputItemsOf, ownsId, type ResponseOwner, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

// An output item id is unique per project and kind of key, as in the memory and Redis stores: a live record and a
// sandbox one may both hold an id (an upstream repeating the simulator's). So each kind has its own item table, as
// Redis has its own keys: response_items (live keys', exactly as the previous release made and reads it) and
// response_items_sandbox (created beside it when missing: no copy, and the previous release ignores it).
const ITEMS_TABLES = ["response_items", "response_items_sandbox"].map((name) => `CREATE TABLE IF NOT EXISTS ${name} (
  project TEXT NOT NULL, item_id TEXT NOT NULL, response_id TEXT NOT NULL, expires_at INTEGER NOT NULL, item TEXT NOT NULL,
  PRIMARY KEY (project, item_id)
);
CREATE INDEX IF NOT EXISTS ${name}_response ON ${name} (response_id);
CREATE INDEX IF NOT EXISTS ${name}_expires ON ${name} (expires_at);`).join("\n");
/** The item table of a kind of key. */
const itemsTable = (sandbox: boolean | undefined) => (sandbox ? "response_items_sandbox" : "response_items");

const SCHEMA = `
CREATE TABLE IF NOT EXISTS responses (
  id TEXT PRIMARY KEY, project TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  provider TEXT NOT NULL, model TEXT NOT NULL, native INTEGER NOT NULL, previous_id TEXT,
  response TEXT NOT NULL, input TEXT NOT NULL, full_output TEXT, project_key INTEGER, sandbox INTEGER
);
CREATE INDEX IF NOT EXISTS responses_expires ON responses (expires_at);
${ITEMS_TABLES}
`;

const SWEEP_EVERY_MS = 60_000;

interface Row {
  id: string; project: string; created_at: number; expires_at: number; provider: string; model: string; native: number;
  previous_id: string | null; response: string; input: string; full_output: string | null; input_bytes: number;
  project_key: number | null; sandbox: number | null;
}

/** A row's kind of key as stored: 1 a sandbox key's, NULL (rows of earlier releases) or 0 a live key's. */
const KIND = "coalesce(sandbox, 0)";
const kindOf = (owner: ResponseOwner) => (owner.sandbox ? 1 : 0);

export class SqliteResponseStore implements ResponseStore {
  private readonly stmts;
  private readonly save: (rec: ResponseRecord) => boolean;
  private readonly remove: (id: string) => void;
  private lastSweep = 0;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    // A file made by the first version of this table has no full_output column yet.
    // Nor one of an earlier release a project_key column (NULL in its rows: who made them is not known).
    const columns = (db.prepare("PRAGMA table_info(responses)").all() as { name: string }[]).map((c) => c.name);
    if (!columns.includes("full_output")) db.exec("ALTER TABLE responses ADD COLUMN full_output TEXT");
    if (!columns.includes("project_key")) db.exec("ALTER TABLE responses ADD COLUMN project_key INTEGER");
    // Nor, before sandbox keys had stored responses of their own, a sandbox column (NULL in its rows: live keys').
    if (!columns.includes("sandbox")) db.exec("ALTER TABLE responses ADD COLUMN sandbox INTEGER");
    this.stmts = {
      put: db.prepare(`INSERT OR REPLACE INTO responses (id, project, created_at, expires_at, provider, model, native, previous_id, response, input, full_output, project_key, sandbox)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      // octet_length: the input's size as stored (UTF-8), without reading it into a string to measure it.
      get: db.prepare(`SELECT *, octet_length(input) AS input_bytes FROM responses WHERE id = ? AND project = ? AND ${KIND} = ? AND expires_at > ?`),
      owner: db.prepare(`SELECT project, ${KIND} = 1 AS sandbox FROM responses WHERE id = ?`),
      del: db.prepare("DELETE FROM responses WHERE id = ?"),
      sweep: db.prepare("DELETE FROM responses WHERE expires_at <= ?"),
      items: [false, true].map((sandbox) => itemStatements(db, itemsTable(sandbox))),
    };
    this.remove = db.transaction((id: string) => {
      this.stmts.del.run(id);
      for (const items of this.stmts.items) items.del.run(id);
    });
    // IMMEDIATE: it reads first, and a deferred one would fail at once while the checkpointer holds the write lock.
    this.save = db.transaction((rec: ResponseRecord) => {
      const owner = this.stmts.owner.get(rec.id) as { project: string; sandbox: number } | undefined;
      if (!ownsId(owner && { project: owner.project, sandbox: owner.sandbox === 1 }, rec)) return false;
      // A replaced record's old items go first (a re-save may carry other output).
      for (const items of this.stmts.items) items.del.run(rec.id);
      this.stmts.put.run(rec.id, rec.project, rec.createdAt, rec.expiresAt, rec.provider, rec.model, rec.native ? 1 : 0,
        rec.previousResponseId, JSON.stringify(rec.response), rec.inputJson ?? JSON.stringify(rec.input), rec.fullOutput ? JSON.stringify(rec.fullOutput) : null,
        rec.projectKey === undefined ? null : rec.projectKey ? 1 : 0, rec.sandbox ? 1 : 0);
      const { put } = this.stmts.items[rec.sandbox ? 1 : 0]!;
      for (const item of outputItemsOf(rec)) put.run(rec.project, item.id, rec.id, rec.expiresAt, JSON.stringify(item));
      return true;
    }).immediate;
  }

  async put(rec: ResponseRecord): Promise<boolean> {
    if (rec.createdAt - this.lastSweep >= SWEEP_EVERY_MS) this.sweep((this.lastSweep = rec.createdAt));
    return this.save(rec);
  }

  async get(owner: ResponseOwner, id: string, now: number): Promise<ResponseRecord | undefined> {
    const r = this.stmts.get.get(id, owner.project, kindOf(owner), now) as Row | undefined;
    if (!r) return undefined;
    return {
      id: r.id, project: r.project, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), provider: r.provider, model: r.model,
      native: Number(r.native) === 1, previousResponseId: r.previous_id, response: JSON.parse(r.response), input: JSON.parse(r.input),
      inputBytes: Number(r.input_bytes),
      ...(r.full_output ? { fullOutput: JSON.parse(r.full_output) } : {}),
      ...(r.project_key === null || r.project_key === undefined ? {} : { projectKey: Number(r.project_key) === 1 }),
      ...(Number(r.sandbox) === 1 ? { sandbox: true } : {}),
    };
  }

  async delete(owner: ResponseOwner, id: string, now: number): Promise<boolean> {
    if (!this.stmts.get.get(id, owner.project, kindOf(owner), now)) return false;
    this.remove(id);
    return true;
  }

  async items(owner: ResponseOwner, ids: string[], now: number): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    const { get } = this.stmts.items[kindOf(owner)]!;
    for (const itemId of ids) {
      const r = get.get(owner.project, itemId, now) as { response_id: string; item: string } | undefined;
      if (r) found.set(itemId, { responseId: r.response_id, item: JSON.parse(r.item) });
    }
    return found;
  }

  /** Drop expired rows (reads already ignore them). */
  sweep(now: number): void {
    this.stmts.sweep.run(now);
    for (const items of this.stmts.items) items.sweep.run(now);
  }
}

/** One item table's statements (the same for both kinds of key). */
function itemStatements(db: Database.Database, table: string) {
  return {
    // The same project and kind's later record takes an item id over, as in the other stores.
    put: db.prepare(`INSERT OR REPLACE INTO ${table} (project, item_id, response_id, expires_at, item) VALUES (?, ?, ?, ?, ?)`),
    get: db.prepare(`SELECT response_id, item FROM ${table} WHERE project = ? AND item_id = ? AND expires_at > ?`),
    del: db.prepare(`DELETE FROM ${table} WHERE response_id = ?`),
    sweep: db.prepare(`DELETE FROM ${table} WHERE expires_at <= ?`),
  };
}
