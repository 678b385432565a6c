// Translated requests to reasoning models of OpenAI-compatible hosts that take only some efforts, through the gateway
// as it ships (gateway.yaml: SQLite store, full default pipeline, the default catalog, a key with a budget and rate
// limits). Claude Code's default budgets land on medium, which xAI refuses on grok-3-mini (400 "Supported values: low,
// high"); Groq refuses gpt-oss efforts other than low, medium and high; DeepSeek says thinking off with its thinking
// field. The gateway sends what each model takes and names what it changed (core/metering/reasoning-efforts.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";

let groq: FakeOpenAI;
let xai: FakeOpenAI;
let deepseek: FakeOpenAI;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;
let messages: Anthropic["messages"];

beforeAll(async () => {
  [groq, xai, deepseek, openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.groq.base_url = groq.baseUrl;
  config.providers.xai.base_url = xai.baseUrl;
  config.providers.deepseek.base_url = deepseek.baseUrl;
  const keys = { GROQ_API_KEY: "sk-fake-upstream", DEEPSEEK_API_KEY: "sk-fake-upstream", XAI_API_KEY: "sk-fake-upstream" };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), ...keys } });
  client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
  messages = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 }).messages;
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([groq, xai, deepseek, openai].map((f) => f?.close()));
  await anthropic?.close();
});

const hi = [{ role: "user" as const, content: "Hi" }];

describe("an effort the model does not take", () => {
  it("Messages on xai/grok-3-mini with a 2048-token budget (medium): low reaches xAI, thinking named", async () => {
    const { data, response } = await messages.create({ model: "xai/grok-3-mini", max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2048 }, messages: hi }).withResponse();
    expect(data.content.some((b: any) => b.type === "text")).toBe(true);
    expect(xai.requests.at(-1)!.body.reasoning_effort).toBe("low");
    expect(response.headers.get("x-mg-dropped-params")).toBe("thinking");
  });

  it("Responses on Groq's gpt-oss-120b with effort minimal: low reaches Groq, reasoning.effort named", async () => {
    const { response } = await client.responses.create({ model: "openai/gpt-oss-120b", reasoning: { effort: "minimal" }, input: "Hi" }).withResponse();
    expect(groq.requests.at(-1)!.body.reasoning_effort).toBe("low");
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning.effort");
  });
});

describe("thinking off", () => {
  it("Messages thinking disabled on deepseek/deepseek-flash: DeepSeek's thinking {type: disabled}, no effort", async () => {
    const { response } = await messages.create({ model: "deepseek/deepseek-flash", max_tokens: 1000, thinking: { type: "disabled" }, messages: hi }).withResponse();
    const sent = deepseek.requests.at(-1)!.body;
    expect(sent.thinking).toEqual({ type: "disabled" });
    expect(sent).not.toHaveProperty("reasoning_effort");
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("Messages thinking disabled on Groq's gpt-oss-120b (which cannot stop reasoning): low, named", async () => {
    const { response } = await messages.create({ model: "openai/gpt-oss-120b", max_tokens: 1000, thinking: { type: "disabled" }, messages: hi }).withResponse();
    expect(groq.requests.at(-1)!.body.reasoning_effort).toBe("low");
    expect(response.headers.get("x-mg-dropped-params")).toBe("thinking");
  });

  it("a native chat request stays as sent", async () => {
    await client.chat.completions.create({ model: "xai/grok-3-mini", reasoning_effort: "high", messages: hi });
    expect(xai.requests.at(-1)!.body.reasoning_effort).toBe("high");
  });
});
