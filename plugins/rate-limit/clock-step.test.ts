// An NTP correction steps the clock back while the gateway runs: a key's recent requests must not hold it back for
// as long as the step. Only Date is faked (the clock the rate limit reads); timers and sockets run as usual.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, KEY, policyConfig } from "../../test/helpers/policy-config.ts";

const HOUR = 3_600_000;

describe("rate limits after the clock steps back an hour", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { keys: [keyEntry("k1", KEY, { rate_limits: { rpm: 100 } })] } }));
  });
  afterEach(() => vi.useRealTimers());
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("a key that made 2 of its rpm 100 an hour ahead gets its third request, 97 left, not 429 for the hour", async () => {
    const t = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: t + HOUR, shouldAdvanceTime: true });
    const url = `${gw.baseURL}/chat/completions`;
    for (let i = 0; i < 2; i++) expect((await postJson(url, chat(), auth(KEY))).status).toBe(200);
    vi.setSystemTime(t);
    const third = await postJson(url, chat(), auth(KEY));
    expect(third.status).toBe(200);
    expect(third.headers.get("x-ratelimit-remaining-requests")).toBe("97");
  });
});
