// An idempotent answer given while the store could not take its record (Redis paused after the claim) is still
// kept once the store is back: a retry with the same key replays it instead of calling, and billing, the provider
// a second time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";

describe("idempotency across a store outage", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, probe_interval_ms: 100 } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("the record is saved when the store is back, and the retry is a replay", async () => {
    const key = `outage-${Date.now()}`;
    let paused = false;
    // The claim is taken; Redis stops answering while the provider answers, so the record cannot be saved then.
    fake.hook = () => {
      if (!paused) {
        paused = true;
        redis.pause();
        setTimeout(() => redis.resume(), 1000);
      }
      return false;
    };
    const first = await postJson(`${gw.baseURL}/chat/completions`, chat(), { ...auth(), "idempotency-key": key });
    expect(first.status, first.text).toBe(200);
    fake.hook = undefined;
    const calls = fake.requests.length;
    for (let i = 0; i < 100 && (await fetch(`${gw.url}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));

    const again = await postJson(`${gw.baseURL}/chat/completions`, chat(), { ...auth(), "idempotency-key": key });
    expect(again.status, again.text).toBe(200);
    // Before: the key was released when the save failed, so this ran (and was billed) again.
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.choices[0].message.content).toBe(first.json.choices[0].message.content);
    expect(fake.requests.length).toBe(calls);
  });
});
