// The policies fail closed: with the Redis store gone, requests get a 500 INTERNAL envelope (no unmetered traffic,
// no hang, no crash); a gateway whose store is unreachable refuses to start.
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

  it("answers 500 INTERNAL without calling the upstream while Redis is down", async () => {
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
    await redis.stop();
    const before = fake.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), auth());
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("INTERNAL");
    expect(fake.requests.length).toBe(before);
  });

  it("refuses to start when the store cannot be reached", async () => {
    await expect(startTestGateway(policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url } }))).rejects.toThrow(/cannot reach Redis/);
  });
});
