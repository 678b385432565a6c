// Live endpoint stats shared through Redis: traffic through one replica shows up in the other's catalog.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { startTestGateway, testKey, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";

const KEY = testKey("stats-redis");
let redis: TestRedis;
let fake: FakeOpenAI;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  fake = await startFakeOpenAI({ chunkDelayMs: 2 });
  const config = {
    store: { kind: "redis", url: redis.url, prefix: `mg-${ulid()}:` },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "acme/m": { context_window: 1000, max_tokens: 100, endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  };
  [a, b] = await Promise.all([startTestGateway(config), startTestGateway(config)]);
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  await redis?.stop();
});

const endpoints = async (gw: TestGateway) =>
  ((await (await fetch(`${gw.baseURL}/models/acme/m/endpoints`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as any).data.endpoints[0];

describe("stats across replicas", () => {
  it("replica B reports latency, throughput and uptime of streams served by replica A", async () => {
    expect(await endpoints(b)).toMatchObject({ latency_last_1h: null, throughput_last_1h: null, uptime_last_1d: null });
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${a.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ model: "acme/m", stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      await res.text();
    }
    // A batches its samples to Redis once a second; B reads the merged view.
    let ep: any;
    for (let i = 0; i < 40; i++) {
      ep = await endpoints(b);
      if (ep.uptime_last_1d !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ep.uptime_last_1d).toBe(1);
    expect(ep.latency_last_1h.p50).toBeGreaterThan(0);
    expect(ep.throughput_last_1h.p50).toBeGreaterThan(0);
  });
});
