// The guard on a busy event loop: a store that answered while the gateway's own loop was held up past
// store.timeout_ms (a big body parsed, a GC pause, a saturated host) is not an outage. Before, the bound's timer
// fired before the answer waiting for the loop was read: the call got 503 STORE_UNAVAILABLE and the store was probed
// as suspect (a Redis command's own timeout marked it down at once: redis-command-bound.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { MemoryStore } from "./memory.ts";
import { GuardedStore, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { createLogger } from "../log.ts";
import { AnsweringThread, holdLoop } from "../busy-loop.testkit.ts";
import type { Reservation } from "./types.ts";

/** A thread that answers each message at once, as SQLite's fsync thread and a Redis server answer the store. */
const ECHO = `const { parentPort, workerData } = require("node:worker_threads");
parentPort.on("message", (m) => { parentPort.postMessage(m); answered(workerData); });`;

/** A store whose reservations are answered by another thread; `beforeSend` runs as one is about to go. */
class ThreadAnswered extends MemoryStore {
  readonly thread = new AnsweringThread(ECHO);
  beforeSend: () => void = () => {};
  override async reserve(r: Reservation, now: number) {
    const answer = this.thread.message();
    this.beforeSend();
    this.thread.worker.postMessage(r.id);
    await answer;
    return super.reserve(r, now);
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("GuardedStore on a busy event loop", () => {
  it("a call answered while the loop was busy past timeout_ms succeeds, and no store failure is counted", async () => {
    const inner = new ThreadAnswered();
    cleanups.push(() => inner.thread.close());
    const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-guard-busy-")), "ledger");
    const registry = new Registry();
    const g = new GuardedStore(inner, { config: () => ({ kind: "memory", timeout_ms: 100, probe_interval_ms: 50 }), log: createLogger("silent"), registry, spool });
    cleanups.push(() => g.close());
    inner.thread.worker.postMessage("warm up");
    await inner.thread.message(); // the thread is running
    await new Promise((r) => setImmediate(r)); // off the thread's message callback, as a request handler is
    const t0 = performance.now();
    let seen: number | undefined;
    inner.beforeSend = () => (seen = inner.thread.answers());
    const reserved = g.reserve({ project: "acme", periodKey: "total", periodStart: 0, id: "r1", amountPico: 10n, limitPico: 100n, leaseMs: 60_000 }, Date.now());
    expect(seen).toBeDefined(); // sent to the thread before this line
    holdLoop(t0, 250, { thread: inner.thread, seen: seen! }); // the answer is waiting for the loop, the bound long past
    await expect(reserved).resolves.toMatchObject({ ok: true });
    const failures = (await registry.getSingleMetric("gateway_store_failures_total")!.get()).values;
    expect(failures).toEqual([]);
  });
});
