// Redis commands on a busy event loop: the store's Redis (a server on another thread) answers while the gateway's
// loop is held up past store.timeout_ms; the answer is the answer, not "Command timed out" (which marked the store
// down and gave requests 503 STORE_UNAVAILABLE).
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "./redis.ts";
import { RedisCommandTimeout } from "./redis-command-bound.ts";
import { FakeRedis } from "./fake-redis.testkit.ts";
import { holdLoop } from "../busy-loop.testkit.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { GuardedStore, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { createLogger } from "../log.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function storeOn(ms: number): Promise<{ redis: FakeRedis; store: RedisStore }> {
  const redis = await FakeRedis.start();
  cleanups.push(() => redis.close());
  const store = await RedisStore.connect(redis.url, "mg:", { commandTimeoutMs: ms });
  cleanups.push(() => store.close());
  return { redis, store };
}

describe("the store's Redis commands, bounded by store.timeout_ms", () => {
  it("a reply that came while the event loop was busy past the bound is the reply", async () => {
    const { redis, store } = await storeOn(100);
    await redis.treat("script", "hold");
    const sent = redis.received("script");
    const t0 = performance.now();
    const probe = store.probe(); // a script call, as every budget and rate-limit check is
    await sent;
    await new Promise((r) => setImmediate(r)); // off the thread's message callback, as a request handler is
    const seen = redis.thread.answers();
    redis.release();
    holdLoop(t0, 250, { thread: redis.thread, seen }); // the reply is waiting in the socket, the bound long past
    await expect(probe).resolves.toBeUndefined();
  });

  it("a command never answered still fails at its bound", async () => {
    const { redis, store } = await storeOn(100);
    await redis.treat("script", "never");
    const err = await store.probe().catch((e) => e);
    expect(err).toBeInstanceOf(RedisCommandTimeout);
    expect(err).toMatchObject({ ms: 100 });
  });
});

describe("a Redis command that timed out, through the store guard", () => {
  it("is a slow call (503 'did not answer in time', the store probed before it is marked down), not an outage at once", async () => {
    const { redis, store } = await storeOn(100);
    const registry = new Registry();
    const logs: Array<{ msg: string; operation?: unknown }> = [];
    const log = createLogger("silent");
    log.error = (msg: string, fields?: Record<string, unknown>) => void logs.push({ msg, operation: fields?.operation });
    const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-redis-timeout-")), "ledger");
    const guard = new GuardedStore(store, { config: () => ({ kind: "redis", url: redis.url, timeout_ms: 100, probe_interval_ms: 60_000 }), log, registry, spool });
    await redis.treat("script", "never"); // a paused server: the reservation and the probe after it get no reply
    const err = await guard.reserve({ project: "acme", periodKey: "total", periodStart: 0, id: "r1", amountPico: 10n, limitPico: 100n, leaseMs: 60_000 }, Date.now()).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE", details: { reason: "timeout" } });
    expect((err as Error).message).toContain("did not answer in time");
    // One slow call is not an outage yet: the store is still up while the probe runs.
    expect((await registry.getSingleMetric("gateway_store_up")!.get()).values[0]!.value).toBe(1);
    expect(logs).toEqual([]);
    // The probe gets no reply either: now it is down, marked so by the probe.
    const status = await guard.status();
    expect(status).toMatchObject({ up: false, reason: "timeout" });
    expect(logs).toEqual([{ msg: "store unavailable; probing until it answers", operation: "probe" }]);
    const failures = (await registry.getSingleMetric("gateway_store_failures_total")!.get()).values.map((v) => v.labels);
    expect(failures).toEqual([{ operation: "reserve", reason: "timeout" }, { operation: "probe", reason: "timeout" }]);
    await guard.close().catch(() => {});
  });
});
