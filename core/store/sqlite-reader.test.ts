import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "./sqlite.ts";
import { SqliteReader } from "./sqlite-reader.ts";

/** A statement that keeps SQLite busy for tens of seconds. */
const SLOW = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000000) SELECT count(*) AS n FROM c";

describe("SQLite ledger reader thread", () => {
  it("runs a report off the event loop; one past its bound is stopped and the next read works", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-reader-")), "g.db");
    await new SqliteStore(path).close(); // the file and its schema
    // The bound covers the read after it too, which starts a new thread: 2 s leaves that room on a loaded machine.
    const reader = new SqliteReader(path, 2000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const t0 = performance.now();
    const err = await reader.all(SLOW, []).then(() => undefined, (e: Error) => e);
    clearInterval(timer);
    expect(err?.message).toMatch(/did not finish within 2000 ms/);
    expect(performance.now() - t0).toBeLessThan(5_000);
    // The event loop kept running while SQLite worked (on the main thread it would have been blocked throughout).
    expect(ticks).toBeGreaterThan(10);
    expect(await reader.all("SELECT count(*) AS n FROM ledger_all", [])).toEqual([{ n: 0n }]);
    await reader.close();
    await expect(reader.all("SELECT 1", [])).rejects.toThrow(/closed/);
  });

  it("sees every record the store has committed", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-reader-")), "g.db");
    const store = new SqliteStore(path);
    const reader = new SqliteReader(path);
    for (let i = 0; i < 3; i++) {
      await store.record({
        generationId: `g${i}`, requestId: `r${i}`, ts: Date.now(), keyId: "k", project: "p", endpoint: "chat", model: "m", provider: "x", attempts: 1,
        inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0,
        costUsd: "0", costPico: 0n, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
      });
      expect(await reader.all("SELECT count(*) AS n FROM ledger_all", [])).toEqual([{ n: BigInt(i + 1) }]);
    }
    await reader.close();
    await store.close();
  });
});
