// The SQLite store's commits run in the writer thread; what it answered is in the file; a dead thread loses nothing.
import { describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "./sqlite.ts";
import { periodOf } from "./periods.ts";
import type { LedgerEntry } from "./types.ts";

let n = 0;
const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  generationId: `gen_${++n}_${Math.random()}`, requestId: `req_${n}`, ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "m", provider: "p", attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0,
  reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: "0.000001", costPico: 1_000_000n, latencyMs: 1,
  ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false, ...over,
});

const fresh = () => join(mkdtempSync(join(tmpdir(), "mg-writer-")), "g.db");
const rows = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS c FROM ledger").get() as { c: number }).c;
  } finally {
    db.close();
  }
};
type Internals = { stmts: { insert: { run: (...a: unknown[]) => unknown } }; writer?: { worker: { terminate(): Promise<number> } } };

describe("SQLite writer thread", () => {
  it("commits ledger records off the event loop: the row is in the file when record() resolves, a duplicate counts once", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    const month = periodOf("month", Date.now());
    try {
      const mainInsert = vi.spyOn((store as unknown as Internals).stmts.insert, "run");
      expect(await store.spent("acme", month.key, month.start)).toBe(0n);
      const e = entry();
      await store.record(e);
      expect(rows(path)).toBe(1); // another connection sees it: committed, not just queued
      await store.record({ ...e }); // same generation id: ignored by the writer, spend unchanged
      expect(rows(path)).toBe(1);
      expect(await store.spent("acme", month.key, month.start)).toBe(1_000_000n);
      expect(mainInsert).not.toHaveBeenCalled(); // the store's own connection did not write it
      expect((store as unknown as Internals).writer).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it("records handed in together all commit, including those queued when close() is called", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    const writes = Array.from({ length: 200 }, () => store.record(entry()));
    await store.close();
    await Promise.all(writes);
    expect(rows(path)).toBe(200);
  });

  it("when the thread dies, writes go on committing on the store's own connection", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    try {
      await store.record(entry());
      await (store as unknown as Internals).writer!.worker.terminate();
      await store.record(entry());
      await store.record(entry());
      expect(rows(path)).toBe(3);
      const month = periodOf("month", Date.now());
      expect(await store.spent("acme", month.key, month.start)).toBe(3_000_000n);
    } finally {
      await store.close();
    }
  });

  it("finished idempotency records go through the same commits and are replayed after a restart", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    const now = Date.now();
    expect((await store.idempotencyBegin("acme:k", "h1", "o1", 60_000, now)).state).toBe("new");
    await store.idempotencyComplete("acme:k", "h1", "o1", { status: 200, headers: {}, body: { ok: true } } as never, 60_000, now);
    await store.close();
    const again = new SqliteStore(path);
    try {
      const got = await again.idempotencyBegin("acme:k", "h1", "o2", 60_000, now + 1);
      expect(got).toMatchObject({ state: "done", response: { status: 200, body: { ok: true } } });
    } finally {
      await again.close();
    }
  });
});
