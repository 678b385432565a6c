// Rate windows on Redis when the Redis server's clock steps back (an NTP correction). The scripts read the server's
// TIME, which a test cannot move: a step back is made by moving the window's stored times an hour ahead, as writes
// made before an hour's step back would have left them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisStore } from "./redis.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { PREVIOUS_RATE_LIMIT } from "./redis-released-rate-scripts.testkit.ts";

const HOUR = 3_600_000;
let redis: TestRedis;
let raw: Redis;
let store: RedisStore;
const prefix = "step:";
beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
  store = await RedisStore.connect(redis.url, prefix);
});
afterAll(async () => {
  await store?.close();
  raw?.disconnect();
  await redis?.stop();
});

/** The window `key` as if it had been written with the server's clock `ms` ahead of where it is now. */
async function writtenAhead(key: string, ms: number): Promise<void> {
  const tk = `${prefix}rl:${key}`;
  const ak = `${prefix}rl-at:${key}`;
  const tat = Number(await raw.get(tk));
  await raw.set(tk, (tat + ms).toFixed(6), "PX", ms + 120_000);
  const at = await raw.get(ak);
  if (at !== null) await raw.set(ak, (Number(at) + ms).toFixed(6), "PX", ms + 120_000);
}

describe("Redis rate windows after the server's clock steps back an hour", () => {
  it("a key that used 2 of rpm 100 has 98 left: the next request passes, not a 429 for the hour", async () => {
    const rpm = { key: "k1", limit: 100, cost: 1 };
    for (let i = 0; i < 2; i++) expect((await store.rateLimit([rpm], Date.now())).ok).toBe(true);
    await writtenAhead("k1", HOUR);
    const next = await store.rateLimit([rpm], Date.now());
    expect(next).toMatchObject({ ok: true, retryAfterMs: 0 });
    expect(next.windows[0]!.remaining).toBe(97);
    // GET /admin/v1/rate-limits reads the same: reset within the 3 requests' 1.8 s, not the hour.
    const [state] = await store.rateState([{ key: "k1", limit: 100 }], Date.now());
    expect(state!.remaining).toBe(97);
    expect(state!.resetMs).toBeLessThanOrEqual(1800);
  });

  it("debt beyond the window (a correction) is still owed after the step, from now", async () => {
    const tpm = { key: "t1", limit: 100, cost: 100 };
    expect((await store.rateLimit([tpm], Date.now())).ok).toBe(true);
    await store.rateAdjust("t1", 100, 50, Date.now()); // 150 used: 90 s owed
    await writtenAhead("t1", HOUR);
    const refused = await store.rateLimit([{ ...tpm, cost: 1 }], Date.now());
    expect(refused.ok).toBe(false);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(30_600);
  });

  it("a window a previous-release replica charged last (a rolling upgrade) still passes after the step", async () => {
    const rpm = { key: "m1", limit: 10, cost: 1 };
    expect((await store.rateLimit([rpm], Date.now())).ok).toBe(true);
    // The previous release writes the tat and limit as before and leaves this release's write time as it was.
    const [ok] = (await raw.eval(PREVIOUS_RATE_LIMIT, 2, `${prefix}rl:m1`, `${prefix}rl-limit:m1`, 10, 1)) as unknown[];
    expect(Number(ok)).toBe(1);
    await writtenAhead("m1", HOUR);
    const next = await store.rateLimit([rpm], Date.now());
    expect(next).toMatchObject({ ok: true, retryAfterMs: 0 });
    expect(next.windows[0]!.remaining).toBe(7);
  });
});
