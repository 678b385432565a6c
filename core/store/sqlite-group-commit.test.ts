// The SQLite store's group commit: what arrives while the write-ahead log is being fsync'd waits for that fsync and
// goes in one transaction, and nothing resolves before the fsync that covers it (issue 32). fdatasync is held by the
// test so "while an fsync runs" does not depend on the disk's speed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { LedgerEntry } from "./types.ts";

const heldSyncs: ((err: Error | null) => void)[] = [];
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return { ...fs, fdatasync: (_fd: number, cb: (err: Error | null) => void) => { heldSyncs.push(cb); } };
});
const { SqliteStore } = await import("./sqlite.ts");

let n = 0;
const entry = (): LedgerEntry => ({
  generationId: `gen_${++n}`, requestId: `req_${n}`, ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat",
  model: "openai/gpt-4o-mini", provider: "openai", attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0,
  cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.000001",
  costPico: 1_000_000n, latencyMs: 12.5, ttftMs: 3, status: 200, outcome: "ok", sandbox: false, estimated: false,
});
const turn = () => new Promise<void>((r) => setImmediate(r));
const releaseSync = async () => { heldSyncs.shift()!(null); await turn(); };

describe("SQLite group commit", () => {
  afterEach(() => { heldSyncs.length = 0; });

  it("records handed in during an fsync share one transaction and resolve only after the next fsync", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-group-")), "g.db");
    const store = new SqliteStore(path);
    const commits: number[] = [];
    const internals = store as unknown as { commitAll: (writes: (() => void)[]) => void };
    const commitAll = internals.commitAll;
    internals.commitAll = (writes) => { commits.push(writes.length); commitAll(writes); };
    const resolved: string[] = [];
    const track = (name: string, p: Promise<void>) => p.then(() => resolved.push(name));

    track("a", store.record(entry()));
    await turn();
    expect(commits).toEqual([1]);
    expect(heldSyncs).toHaveLength(1);

    // Three more in three event-loop turns while the first fsync runs: none is committed yet.
    for (const name of ["b", "c", "d"]) { track(name, store.record(entry())); await turn(); }
    expect(commits).toEqual([1]);
    expect(resolved).toEqual([]);

    await releaseSync();
    expect(resolved).toEqual(["a"]);
    expect(commits).toEqual([1, 3]);
    expect(heldSyncs).toHaveLength(1);
    // Committed, readable by another connection, but not resolved before its own fsync.
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare("SELECT COUNT(*) AS c FROM ledger_all").get()).toEqual({ c: 4 });
    reader.close();

    await releaseSync();
    expect(resolved).toEqual(["a", "b", "c", "d"]);

    // close() waits for what is queued behind a running fsync.
    track("e", store.record(entry()));
    await turn();
    track("f", store.record(entry()));
    const closed = store.close();
    await releaseSync();
    await releaseSync();
    await closed;
    expect(resolved).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  it("a failed fsync rejects the writes it covered; the next ones commit and sync again", async () => {
    const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-group-")), "g.db"));
    const first = store.record(entry());
    await turn();
    const second = store.record(entry());
    await turn();
    heldSyncs.shift()!(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
    await expect(first).rejects.toThrow(/EIO/);
    await turn();
    expect(heldSyncs).toHaveLength(1);
    await releaseSync();
    await expect(second).resolves.toBeUndefined();
    await store.close();
  });
});
