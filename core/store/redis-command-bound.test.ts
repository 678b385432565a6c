// Redis commands on a busy event loop: the store's Redis (a server on another thread) answers while the gateway's
// loop is held up past store.timeout_ms; the answer is the answer, not "Command timed out" (which marked the store
// down and gave requests 503 STORE_UNAVAILABLE).
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "./redis.ts";
import { RedisCommandTimeout } from "./redis-command-bound.ts";
import { FakeRedis } from "./fake-redis.testkit.ts";
import { holdLoop } from "../busy-loop.testkit.ts";

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
