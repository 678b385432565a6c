// Budgets fail closed: with the Redis store gone, a budgeted request gets 503 STORE_UNAVAILABLE with Retry-After at
// once (no unmetered traffic, no hang, no opaque 500, no crash) and /readyz says so; a gateway whose store is
// unreachable, runs without persistence, or may evict keys when full, refuses to start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { Redis } from "ioredis";

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

  it("refuses to start on a Redis that may evict keys when full (it could drop spend), unless told to accept that", async () => {
    const evicting = await startRedis();
    const admin = new Redis(evicting.url, { lazyConnect: true });
    try {
      await admin.connect();
      const store = { kind: "redis", url: evicting.url };
      // The managed services' default: a memory limit, and keys with a TTL (spend keys have one) may be evicted.
      await admin.config("SET", "maxmemory", "100mb");
      await admin.config("SET", "maxmemory-policy", "volatile-lru");
      await expect(startTestGateway(policyConfig(fake.baseUrl, { store }))).rejects.toThrow(
        /evicts keys when it reaches its memory limit \(maxmemory 104857600 bytes, maxmemory-policy volatile-lru\).*Set maxmemory-policy noeviction/);
      const accepted = await startTestGateway(policyConfig(fake.baseUrl, { store: { ...store, require_persistence: false } }));
      expect((await postJson(`${accepted.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
      await accepted.close();
      // A memory limit that refuses writes instead of evicting is fine.
      await admin.config("SET", "maxmemory-policy", "noeviction");
      const safe = await startTestGateway(policyConfig(fake.baseUrl, { store }));
      expect((await postJson(`${safe.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
      await safe.close();
    } finally {
      admin.disconnect();
      await evicting.stop();
    }
  });
});
