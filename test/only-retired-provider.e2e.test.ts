// On the shipped config with the Claude API, Gemini and Bedrock keys set, Claude 3.5 Haiku (retired on the Claude API
// on 2026-02-19 and on Vertex AI on 2026-07-05) is served by Bedrock. A client `only` that leaves it no target is the
// client's 400 naming the field and offering Bedrock, not a 404 saying a model it can call has retired.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";

const NOW = Date.UTC(2026, 10, 28, 12);
const KEY = testKey("only-retired");
const HAIKU = "anthropic/claude-3.5-haiku";
const auth = { authorization: `Bearer ${KEY}` };

/** An own model: a retired fake2 endpoint beside a live openai one. */
const OWN_MODELS = {
  "acme/dual": { endpoints: [
    { provider: "fake2", model: "old", retires: "2026-11-01", pricing: { input: "0.000003", output: "0.000015" } },
    { provider: "openai", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } },
  ] },
};

let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, openai, bedrock] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeBedrock()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl }, { retirements: "as shipped" });
  config.providers.bedrock = fakeBedrockProvider(bedrock);
  config.providers.fake2 = { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake2" };
  Object.assign(config.models ??= {}, OWN_MODELS);
  config.projects.client = { keys: [keyEntry("only-retired", KEY)] };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "fake-gemini-key" } });
});
afterEach(() => vi.useRealTimers());
afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), openai?.close(), bedrock?.close()]);
});

const at = (now: number) => vi.useFakeTimers({ toFake: ["Date"], now, shouldAdvanceTime: true });
const chat = (model: string, only?: string[]) => postJson(`${gw.baseURL}/chat/completions`, {
  model, max_tokens: 10, messages: [{ role: "user", content: "Hi" }], ...(only ? { providerOptions: { gateway: { only } } } : {}),
}, auth);

describe("only leaving a served model no target (shipped config, Claude API, Gemini and Bedrock keys)", () => {
  it("Claude 3.5 Haiku is served by Bedrock, as its /endpoints says", async () => {
    at(NOW);
    const eps = await fetch(`${gw.baseURL}/models/${HAIKU}/endpoints`, { headers: auth });
    expect(((await eps.json()) as any).data.endpoints.map((e: any) => e.provider_name)).toEqual(["bedrock"]);
    bedrock.requests.length = 0;
    const r = await chat(HAIKU);
    expect(r.status).toBe(200);
    expect(bedrock.requests.map((q) => q.model)).toEqual(["us.anthropic.claude-3-5-haiku-20241022-v1:0"]);
  });

  it("only: [anthropic] is the 400 naming only, saying the Claude API endpoint retired and offering bedrock; nothing is sent", async () => {
    at(NOW);
    anthropic.requests.length = 0;
    bedrock.requests.length = 0;
    const r = await chat(HAIKU, ["anthropic"]);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
    expect(r.json.error.message).toContain("anthropic's endpoint retired on 2026-02-19");
    expect(r.json.error.message).not.toContain("vertex");
    expect(anthropic.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it("only: [vertex] is the same 400, naming Vertex AI's day", async () => {
    at(NOW);
    const r = await chat(HAIKU, ["vertex"]);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
    expect(r.json.error.message).toContain("vertex's endpoint retired on 2026-07-05");
  });

  it("only: [groq] offers only the live, configured provider", async () => {
    at(NOW);
    const r = await chat(HAIKU, ["groq"]);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
  });

  it("an own model with a retired fake2 endpoint and a live openai one: only: [fake2] is the 400 offering openai", async () => {
    at(NOW);
    openai.requests.length = 0;
    const r = await chat("acme/dual", ["fake2"]);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toEqual({ field: "providerOptions.gateway.only", offered: ["openai"] });
    expect(r.json.error.message).toContain("fake2's endpoint retired on 2026-11-01");
    expect(openai.requests).toHaveLength(0);
    expect((await chat("acme/dual")).status).toBe(200);
  });
});
