// The SQLite store's ledger journal (issue 32): a record is committed to a small table without indexes and moved into
// the ledger and its rollups in batches. Whatever its state — journaled, moved, left behind by a killed process, stuck
// behind a failing move — every reader sees each record exactly once.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "./sqlite.ts";
import type { LedgerEntry } from "./types.ts";
import type { UsageQuery } from "../contracts/ledger-reader.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

let n = 0;
const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  generationId: `gen_${String(++n).padStart(6, "0")}`, requestId: `req_${n}`, ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "openai/gpt-4o-mini", provider: "openai", attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0,
  cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.000001",
  costPico: 1_000_000n, latencyMs: 12.5, ttftMs: 3, status: 200, outcome: "ok", sandbox: false, estimated: false, ...over,
});
const fresh = () => join(mkdtempSync(join(tmpdir(), "mg-journal-")), "g.db");
const HOUR = 3_600_000;
const today: UsageQuery = { since: Date.now() - 2 * HOUR, until: Date.now() + HOUR, groupBy: ["project"], bucket: "none" };

/** Rows in the ledger and in the journal, read through a connection of its own (as an operator's sqlite3 would). */
function rows(path: string): { ledger: number; journal: number } {
  const db = new Database(path, { readonly: true });
  try {
    const count = (t: string) => (db.prepare(`SELECT COUNT(*) AS c FROM ${t}`).get() as { c: number }).c;
    return { ledger: count("ledger"), journal: count("ledger_journal") };
  } finally {
    db.close();
  }
}
const month = () => ({ key: new Date().toISOString().slice(0, 7), start: Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1) });
// Records are written now and read back by this month's spend: each test runs within one month.
beforeEach(() => awayFromPeriodEnd("month"));

describe("SQLite ledger journal", () => {
  it("a resolved record is in the journal; lookups, spend and reports see it before it is moved, and then it is moved", async () => {
    const path = fresh();
    // Its timer would move the record within 100 ms: on a loaded machine, before it is looked at in the journal.
    const store = new SqliteStore(path, { drainAfterMs: 60_000 });
    try {
      const e = entry();
      await store.record(e);
      expect(rows(path)).toEqual({ ledger: 0, journal: 1 });
      expect(await store.get(e.generationId)).toMatchObject({ generationId: e.generationId, costPico: 1_000_000n });
      expect(await store.ledger({ project: "acme" })).toHaveLength(1);
      const m = month();
      expect(await store.spent("acme", m.key, m.start)).toBe(1_000_000n);
      // A report moves the journal first: it reads the rollups and the ledger.
      const [row] = await store.usage(today);
      expect(row).toMatchObject({ requests: 1, costPico: 1_000_000n });
      expect(rows(path)).toEqual({ ledger: 1, journal: 0 });
      expect((await store.search({ requestId: e.requestId, limit: 5 })).records).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it("moves records on its own shortly after, once each; a replayed record (journaled or moved) adds nothing", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    try {
      const e = entry();
      await store.record(e);
      await store.record(e); // replayed while in the journal
      await vi.waitFor(() => expect(rows(path)).toEqual({ ledger: 1, journal: 0 }), { timeout: 5000, interval: 20 });
      await store.record(e); // replayed after the move
      expect(rows(path)).toEqual({ ledger: 1, journal: 0 });
      const m = month();
      expect(await store.spent("acme", m.key, m.start)).toBe(1_000_000n);
      expect((await store.usage(today))[0]).toMatchObject({ requests: 1, costPico: 1_000_000n });
    } finally {
      await store.close();
    }
  });

  it("what a killed process left in the journal is moved when the file is opened again, once", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    const crashed = fresh();
    try {
      await store.record(entry({ status: 500, outcome: "error" }));
      await store.record(entry());
      // The file and its write-ahead log as they are now (both records committed, neither moved): what kill -9 leaves.
      for (const x of ["", "-wal"]) copyFileSync(path + x, crashed + x);
    } finally {
      await store.close();
    }
    expect(rows(crashed).journal).toBe(2);
    for (let open = 0; open < 2; open++) {
      const again = new SqliteStore(crashed);
      try {
        expect(rows(crashed)).toEqual({ ledger: 2, journal: 0 });
        expect((await again.usage(today))[0]).toMatchObject({ requests: 2, errors: 1, costPico: 2_000_000n });
      } finally {
        await again.close();
      }
    }
  });

  it("a move that fails keeps every record in the journal, readers still see them, and the next move takes them once", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    const admin = new Database(path);
    try {
      // The ledger refuses inserts, as a full disk would refuse the move's pages (the journal's commit still fits).
      admin.exec("CREATE TRIGGER refuse BEFORE INSERT ON ledger BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
      for (let i = 0; i < 3; i++) await store.record(entry());
      await new Promise((r) => setTimeout(r, 300)); // the timer's move has been tried, and failed
      expect(rows(path)).toEqual({ ledger: 0, journal: 3 });
      expect(await store.ledger({ project: "acme" })).toHaveLength(3);
      await expect(store.usage(today)).resolves.toEqual([]); // the report lags; it does not fail
      admin.exec("DROP TRIGGER refuse");
      expect((await store.usage(today))[0]).toMatchObject({ requests: 3, costPico: 3_000_000n });
      expect(rows(path)).toEqual({ ledger: 3, journal: 0 });
    } finally {
      admin.close();
      await store.close();
    }
  });

  it("many records at once are moved in several transactions, all of them, each counted once", async () => {
    const path = fresh();
    const store = new SqliteStore(path);
    try {
      await Promise.all(Array.from({ length: 700 }, (_, i) => store.record(entry({ project: i % 2 ? "acme" : "globex" }))));
      await vi.waitFor(() => expect(rows(path)).toEqual({ ledger: 700, journal: 0 }), { timeout: 5000, interval: 20 });
      const usage = await store.usage(today);
      expect(usage.map((u) => [u.group.project, u.requests]).sort()).toEqual([["acme", 350], ["globex", 350]]);
    } finally {
      await store.close();
    }
  });
});
