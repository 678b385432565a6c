// WAL checkpoints happen in the worker, not in the store's commits; close leaves no WAL behind.
import { describe, expect, it, vi } from "vitest";
import { copyFileSync, existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "./sqlite.ts";
import { Checkpointer } from "./sqlite-checkpointer.ts";
import type { LedgerEntry } from "./types.ts";

let n = 0;
const entry = (): LedgerEntry => ({
  generationId: `gen_${++n}_${Math.random()}`, requestId: `req_${n}`, ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "m", provider: "p", attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0,
  reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: "0.000001", costPico: 1_000_000n, latencyMs: 1,
  ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
});

const fresh = () => join(mkdtempSync(join(tmpdir(), "mg-ckpt-")), "g.db");

describe("SQLite WAL checkpoints", () => {
  it("the store's own connection never checkpoints; the worker copies committed pages into the main file", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    try {
      await store.record(entry());
      const db = (store as unknown as { db: Database.Database }).db;
      expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      // Another connection reads the row from the main file alone once the worker has checkpointed: until then
      // it is only in the WAL (the schema too, so the main file is empty).
      await vi.waitFor(() => {
        const reader = new Database(path, { readonly: true });
        try {
          const [busy, log, done] = Object.values((reader.pragma("wal_checkpoint(PASSIVE)") as object[])[0]!) as number[];
          // A read-only connection cannot checkpoint (it fails while frames are left to copy): `done` is the worker's work.
          // Its attempt holds the checkpoint lock for a moment; a worker's checkpoint that meets it is tried again.
          expect(busy).toBe(0);
          expect(log).toBeGreaterThan(0);
          expect(done).toBe(log);
        } finally {
          reader.close();
        }
      }, { timeout: 10_000, interval: 100 });
      expect(statSync(path).size).toBeGreaterThan(0);
      expect(await store.ledger({ project: "acme" })).toHaveLength(1);
    } finally {
      await store.close();
    }
    // The worker closed first, so the store's close was the last connection: WAL checkpointed and removed.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const db = new Database(path, { readonly: true });
    expect((db.prepare("SELECT COUNT(*) AS c FROM ledger_all").get() as { c: number }).c).toBe(1);
    db.close();
  });

  it("pages a reader kept in the WAL reach the main file once it is done, without another write", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    // The rows the main file alone holds (a copy without its WAL); undefined while it is not a whole database yet.
    const rowsInMainFile = () => {
      const copy = join(mkdtempSync(join(tmpdir(), "mg-ckpt-copy-")), "g.db");
      copyFileSync(path, copy);
      try {
        const db = new Database(copy);
        try {
          return (db.prepare("SELECT COUNT(*) AS c FROM ledger_all").get() as { c: number }).c;
        } finally {
          db.close();
        }
      } catch {
        return undefined;
      }
    };
    const emptySize = statSync(path).size;
    const reader = new Database(path, { readonly: true });
    try {
      await store.record(entry());
      // A reader in a transaction (an operator's `sqlite3`, a backup) pins what it reads; the second record comes after.
      reader.exec("BEGIN");
      expect((reader.prepare("SELECT COUNT(*) AS c FROM ledger_all").get() as { c: number }).c).toBe(1);
      await store.record(entry());
      // The worker's checkpoint copies what the reader allows, not the second record.
      await vi.waitFor(() => expect(statSync(path).size).toBeGreaterThan(emptySize), { timeout: 10_000, interval: 50 });
      expect(rowsInMainFile()).not.toBe(2);
      reader.exec("COMMIT");
      // No write follows: the worker tries again on its own.
      await vi.waitFor(() => expect(rowsInMainFile()).toBe(2), { timeout: 10_000, interval: 100 });
    } finally {
      reader.close();
      await store.close();
    }
  });

  // Responses traffic: a stored response and a ledger record per request, written without a pause until `bytes` of
  // responses are saved (an amount, not a time: a loaded machine writes less per second).
  const writeFor = async (store: SqliteStore, bytes: number, onBatch: (syncMs: number) => void) => {
    const text = "x".repeat(4000);
    for (let saved = 0; saved < bytes; saved += 4 * 8000) {
      const now = Date.now();
      const writes: Promise<unknown>[] = [];
      for (let j = 0; j < 4; j++) {
        const id = `resp_${++n}`;
        const t = performance.now();
        writes.push(store.responses.put({
          id, project: "acme", createdAt: now, expiresAt: now + 3_600_000, provider: "p", model: "m", native: false, previousResponseId: null,
          response: { id, output: [{ id: `msg_${n}`, type: "message", content: [{ type: "output_text", text }] }] }, input: [{ id: `in_${n}`, role: "user", content: text }],
        }));
        // The save runs before put returns: how long it held the event loop (a wait for the write lock included).
        onBatch(performance.now() - t);
        writes.push(store.record(entry()));
      }
      await Promise.all(writes);
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const walBytes = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

  it("under steady writes the WAL file stays near its limit, and is emptied once they stop", async () => {
    const path = fresh();
    const limit = 4 << 20;
    const store = new SqliteStore(path, { walLimitBytes: limit });
    let most = 0;
    try {
      // ~8 KB per response, 4 per batch without a pause: the checkpoint never finds the log idle. Before, the file
      // grew by all of it (over 100 MiB); now it stays within the limit plus what arrives while a RESTART waits.
      await writeFor(store, 7 * limit, () => (most = Math.max(most, walBytes(path))));
      expect(most).toBeGreaterThan(limit / 2);
      expect(most).toBeLessThan(4 * limit);
      // No write for a second: the file is truncated, not left at its high-water mark.
      await vi.waitFor(() => expect(walBytes(path)).toBeLessThan(limit / 16), { timeout: 10_000, interval: 100 });
    } finally {
      await store.close();
    }
  });

  it("a reader that keeps the WAL from starting over never holds the store's writes for long; the WAL shrinks once it is done", async () => {
    const path = fresh();
    const limit = 1 << 20;
    const store = new SqliteStore(path, { walLimitBytes: limit });
    await store.record(entry());
    const reader = new Database(path, { readonly: true });
    let slowest = 0;
    try {
      // An operator's sqlite3 in a transaction: every RESTART the worker tries waits for it, holding the write lock.
      reader.exec("BEGIN");
      reader.prepare("SELECT COUNT(*) AS c FROM ledger_all").get();
      await writeFor(store, 6 * limit, (ms) => (slowest = Math.max(slowest, ms)));
      expect(walBytes(path)).toBeGreaterThan(2 * limit); // it could not start over
      expect(slowest).toBeLessThan(2500); // never the 5 s busy timeout, however loaded the machine
      reader.exec("COMMIT");
      await writeFor(store, 2 * limit, () => {});
      await vi.waitFor(() => expect(walBytes(path)).toBeLessThan(limit / 16), { timeout: 10_000, interval: 100 });
    } finally {
      reader.close();
      await store.close();
    }
  });

  it("a store that only reads starts no worker", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    await store.ledger({});
    expect((store as unknown as { checkpointer?: Checkpointer }).checkpointer).toBeUndefined();
    await store.close();
  });

  it("a worker that cannot open the file reports it once, so the store can restore automatic checkpoints", async () => {
    const onFail = vi.fn();
    const c = new Checkpointer(join(tmpdir(), "mg-ckpt-missing-dir", "nope", "g.db"), onFail);
    await vi.waitFor(() => expect(onFail).toHaveBeenCalledTimes(1), { timeout: 10_000 });
    await c.close();
    expect(onFail).toHaveBeenCalledTimes(1);
  });
});
