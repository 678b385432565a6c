// Budgets fail closed: with the Redis store gone, a budgeted request gets 503 STORE_UNAVAILABLE with Retry-After at
// once (no unmetered traffic, no hang, no opaque 500, no crash) and /readyz says so; a gateway whose store is
// unreachable, or runs without persistence, refuses to start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";

describe("Redis store unavailable", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url }, acme: { budget: { usd: "1" }, rate_limits: { rpm: 100 } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("answers 503 STORE_UNAVAILABLE with Retry-After, without calling the upstream, while Redis is down", async () => {
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    await redis.stop();
    const before = fake.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), auth());
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: "STORE_UNAVAILABLE", details: { store: "redis" } });
    expect(r.json.error.message).toMatch(/state store \(redis\)/);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(fake.requests.length).toBe(before);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: "not_ready", checks: { store: { status: "down", kind: "redis" } } });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200); // liveness: the process itself is fine
  });

  it("refuses to start when the store cannot be reached", async () => {
    await expect(startTestGateway(policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url } }))).rejects.toThrow(/cannot reach Redis/);
  });

  it("refuses to start on a Redis without persistence, saying why, unless told to accept resets", async () => {
    const volatile = await startRedis({ aof: false });
    try {
      const store = { kind: "redis", url: volatile.url };
      await expect(startTestGateway(policyConfig(fake.baseUrl, { store }))).rejects.toThrow(
        /runs without appendonly \(AOF\): a Redis restart would erase the usage ledger and every project's spend/);
      const accepted = await startTestGateway(policyConfig(fake.baseUrl, { store: { ...store, require_persistence: false } }));
      expect((await postJson(`${accepted.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
      await accepted.close();
    } finally {
      await volatile.stop();
    }
  });
});
