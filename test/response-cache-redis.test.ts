// The response cache on Redis, shared by replicas: an answer one gateway kept is a hit on another (whose in-process
// front is empty), expires on Redis's clock, and a Redis that stops answering costs only the cache — the request is
// answered from the provider within the store's timeout, never held.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { Redis } from "ioredis";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

describe("response cache on Redis, two gateways", () => {
  let redis: TestRedis;
  let openai: FakeOpenAI;
  let cohere: Reranker;
  let a: TestGateway;
  let b: TestGateway;
  let client: Redis;
  const prefix = `mg-${ulid()}:`;

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    openai = await startFakeOpenAI();
    cohere = await startFakeCohere();
    const start = async () => {
      const dir = mkdtempSync(join(tmpdir(), "mg-cache-redis-"));
      const config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir, store: { kind: "redis", url: redis.url, prefix, timeout_ms: 200, probe_interval_ms: 100 } }) as any;
      delete config.store.path;
      delete config.projects.always.budget; // budgets fail closed while the store is away; this project has none
      return startTestGateway(config);
    };
    [a, b] = [await start(), await start()];
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await openai?.close();
    await cohere?.close();
    client?.disconnect();
    await redis?.stop();
  });

  const chat = async (gw: TestGateway, content: string, extra: Record<string, unknown> = {}) => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}` },
      body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content }], ...extra }),
    });
    return { status: res.status, cache: res.headers.get("x-mg-cache"), text: await res.text() };
  };

  async function until(f: () => Promise<boolean>, ms = 3000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await f())) {
      if (Date.now() > end) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("an answer kept by one gateway is a hit on the other, and expires on Redis's clock", async () => {
    const before = openai.requests.length;
    const first = await chat(a, "shared answer", optIn({ ttl: 1 }));
    expect(first.cache).toBe("miss");
    // The store write is in the background: the other gateway sees it once Redis has it, with its TTL.
    await until(async () => (await client.keys(`${prefix}rc:*`)).length === 1);
    const [key] = await client.keys(`${prefix}rc:*`);
    expect(await client.pttl(key!)).toBeGreaterThan(0);
    const onB = await chat(b, "shared answer", optIn({ ttl: 1 }));
    expect(onB.cache).toBe("hit");
    expect(onB.text).toBe(first.text);
    expect(openai.requests.length).toBe(before + 1);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await chat(b, "shared answer", optIn({ ttl: 1 }))).cache).toBe("miss");
    expect(openai.requests.length).toBe(before + 2);
  });

  it("a Redis that stops answering costs the cache only: the request is answered from the provider, promptly", async () => {
    await chat(a, "before the outage");
    redis.pause();
    try {
      const t = Date.now();
      const r = await chat(a, "during the outage");
      expect(r.status).toBe(200);
      expect(r.cache).toBe("miss");
      expect(r.text).toContain("Hello from the fake upstream");
      expect(Date.now() - t).toBeLessThan(3000);
    } finally {
      redis.resume();
    }
    await until(async () => (await a.gateway.store.status()).up, 5000);
  });
});
