import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { SqliteStore } from "./sqlite.ts";
import { SqliteReader, type SpawnReader } from "./sqlite-reader.ts";
import { holdLoop } from "../busy-loop.testkit.ts";

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

/**
 * The reader's own thread, counting each answer it posts in shared memory (the AnsweringThread rule of
 * core/busy-loop.testkit.ts: a hold waits on the count, no timing guesses).
 */
function countingReader(path: string, ms: number) {
  const answers = new Int32Array(new SharedArrayBuffer(4));
  const COUNT = `{ const wt = require("node:worker_threads"); const port = wt.parentPort; const post = port.postMessage.bind(port);
port.postMessage = (m) => { post(m); Atomics.add(wt.workerData.answers, 0, 1); Atomics.notify(wt.workerData.answers, 0); }; }\n`;
  let threads = 0;
  const spawn: SpawnReader = (source, data) => {
    threads++;
    return new Worker(COUNT + source, { eval: true, workerData: { ...data, answers } });
  };
  return {
    reader: new SqliteReader(path, ms, spawn),
    threads: () => threads,
    answered: () => Atomics.load(answers, 0),
    /** Blocks this thread until the reader's thread has given more than `seen` answers. */
    waitFor(seen: number) {
      for (let n = Atomics.load(answers, 0); n <= seen; n = Atomics.load(answers, 0)) {
        if (Atomics.wait(answers, 0, n, 10_000) === "timed-out") throw new Error("the reader thread gave no answer within 10 s");
      }
    },
  };
}

describe("SQLite ledger reader on a busy event loop", () => {
  it("reads answered while the loop was busy past the bound are the answers, and the thread is kept", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-reader-busy-")), "g.db");
    await new SqliteStore(path).close();
    const r = countingReader(path, 100);
    try {
      // The thread starts; this loop is held until it has answered, however long a loaded machine takes to start it.
      const first = r.reader.all("SELECT 1 AS n", []);
      r.waitFor(0);
      expect(await first).toEqual([{ n: 1n }]);
      await new Promise((res) => setImmediate(res)); // off the port's own callback, as a report's handler is
      const seen = r.answered();
      const t0 = performance.now();
      const usage = r.reader.all("SELECT 2 AS n", []);
      const search = r.reader.all("SELECT 3 AS n", []);
      r.waitFor(seen + 1); // both answers wait in the port
      holdLoop(t0, 250); // the bound long past
      await expect(Promise.all([usage, search])).resolves.toEqual([[{ n: 2n }], [{ n: 3n }]]);
      expect(r.threads()).toBe(1); // not thrown away and started again
    } finally {
      await r.reader.close();
    }
  });
});
