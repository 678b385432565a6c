// On the shipped config, a request's targets are its models' live endpoints: an endpoint retired by its `retires:`
// day is sent nothing, so it must neither price the budget hold nor size the tpm estimate (a dear retired endpoint
// was a 402 on a key that can well afford the endpoint that serves), and a fallback model with nothing left is
// skipped, not a 404 failing a primary that answers.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const NOW = Date.UTC(2026, 10, 28, 12); // after own models' retirement day (2026-11-01)
const BUDGETED = testKey("retired-budgeted");
const LIMITED = testKey("retired-limited");
const TPM = 100_000;
const auth = (key: string) => ({ authorization: `Bearer ${key}` });

const OWN_MODELS = {
  // A dear endpoint that retired on 2026-11-01 beside the cheap one that serves the model now.
  "acme/dear": { context_window: 200_000, endpoints: [
    { provider: "anthropic", model: "claude-dear-old", retires: "2026-11-01", max_tokens: 64_000, pricing: { input: "0.001", output: "0.1" } },
    { provider: "anthropic", model: "claude-dear-new", max_tokens: 8192, pricing: { input: "0.000003", output: "0.000015" } },
  ] },
  // Every endpoint retired: gone from the catalog.
  "acme/gone": { endpoints: [
    { provider: "anthropic", model: "claude-gone-1", retires: "2026-11-01", replacement: "anthropic/claude-sonnet-4.6", pricing: { input: "0.000003", output: "0.000015" } },
  ] },
};

let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  Object.assign(config.models ??= {}, OWN_MODELS);
  config.projects.budgeted = { keys: [keyEntry("retired-budgeted", BUDGETED)], budget: { usd: "100", period: "month" } };
  config.projects.limited = { keys: [keyEntry("retired-limited", LIMITED)], rate_limits: { rpm: 1000, tpm: TPM } };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterEach(() => vi.useRealTimers());
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

const at = (now: number) => vi.useFakeTimers({ toFake: ["Date"], now, shouldAdvanceTime: true });
const upstreamModels = () => anthropic.requests.map((r) => r.body?.model);
const hi = [{ role: "user", content: "Hi" }];

describe("a retired endpoint is no part of a request's limits", () => {
  it("a $100 budget serves max_tokens 2000 on the live endpoint (the retired one's prices would hold $200)", async () => {
    at(NOW);
    anthropic.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "acme/dear", max_tokens: 2000, messages: hi }, auth(BUDGETED));
    expect(r.json.error).toBeUndefined();
    expect(r.status).toBe(200);
    expect(upstreamModels()).toEqual(["claude-dear-new"]);
  });

  it("the tpm estimate a stream's headers show is sized by the live endpoint's 8192 output tokens, not the retired one's 64000", async () => {
    at(NOW);
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST", headers: { ...auth(LIMITED), "content-type": "application/json" },
      body: JSON.stringify({ model: "acme/dear", stream: true, messages: hi }),
    });
    expect(res.status).toBe(200);
    const held = TPM - Number(res.headers.get("x-ratelimit-remaining-tokens"));
    await res.text();
    expect(held).toBeGreaterThan(8192);
    expect(held).toBeLessThan(9000); // the input estimate is a few hundred tokens at most
  });
});

describe("a fully retired fallback model", () => {
  it("is skipped: the healthy primary answers, where the request was a 404 for the fallback", async () => {
    at(NOW);
    anthropic.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, {
      model: "anthropic/claude-sonnet-4.6", max_tokens: 16, messages: hi, providerOptions: { gateway: { models: ["acme/gone"] } },
    }, auth(BUDGETED));
    expect(r.json.error).toBeUndefined();
    expect(r.status).toBe(200);
    expect(upstreamModels()).toEqual(["claude-sonnet-4-6"]);
  });

  it("as the request's own model is still the 404 naming the day and the replacement", async () => {
    at(NOW);
    const r = await postJson(`${gw.baseURL}/chat/completions`, {
      model: "acme/gone", max_tokens: 16, messages: hi, providerOptions: { gateway: { models: ["anthropic/claude-sonnet-4.6"] } },
    }, auth(BUDGETED));
    expect(r.status).toBe(404);
    expect(r.json.error.message).toContain("was retired on 2026-11-01");
    expect(r.json.error.details.field).toBe("model");
  });
});
