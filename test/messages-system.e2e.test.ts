// Mid-conversation system messages on /v1/messages (what Claude Code sends for models it does not know: its skill
// and agent listings as a `role: "system"` entry after the user turn). Translated models get them as their own
// system instruction; Anthropic models get them as sent, and a model that refuses them answers with Anthropic's own
// 400, which Claude Code's fallback recognises (it retries with user/assistant turns only).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("msg-system-e2e");
const SANDBOX = testKey("msg-system-sb", true);
const pricing = { input: "0.000001", output: "0.000002" };
const MODELS = { openai: "openai/gpt-test", gemini: "google/gemini-test", opus: "anthropic/claude-opus-4.8", sonnet: "anthropic/claude-sonnet-4.5" };
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let gemini: FakeGemini;
let gw: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  [anthropic, openai, gemini] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeGemini()]);
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      [MODELS.openai]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
      [MODELS.gemini]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
      [MODELS.opus]: { type: "language", endpoints: [{ provider: "claude", model: "claude-opus-4-8", pricing }] },
      [MODELS.sonnet]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing }] },
    },
    projects: {
      acme: { keys: [keyEntry("ci", LIVE), keyEntry("sb", SANDBOX)], budget: { usd: "100", period: "month" }, rate_limits: { rpm: 10_000, tpm: 10_000_000 } },
    },
  });
  client = new Anthropic({ apiKey: LIVE, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
});

const SKILLS = "Available skills: pdf, xlsx. Use the Skill tool to load one.";
const weather = { name: "get_weather", description: "Weather for a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } };
/** Claude Code's shape: the listing right after the user turn it applies to. */
const first = (): any[] => [{ role: "user", content: "Weather in Paris?" }, { role: "system", content: SKILLS }];

describe("mid-conversation system messages on translated models", () => {
  it.each([false, true])("OpenAI-protocol model (stream=%s): a system message at its place, through a tool loop", async (stream) => {
    const create = (messages: any[]) => stream
      ? client.messages.stream({ model: MODELS.openai, max_tokens: 200, system: "You are terse.", tools: [weather], messages }).finalMessage()
      : client.messages.create({ model: MODELS.openai, max_tokens: 200, system: "You are terse.", tools: [weather], messages });
    const turn1 = await create(first());
    expect(turn1.stop_reason).toBe("tool_use");
    expect(openai.requests.at(-1)!.body.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "Weather in Paris?" },
      { role: "system", content: SKILLS },
    ]);
    const use = turn1.content.find((b) => b.type === "tool_use")!;
    const history = [
      ...first(),
      { role: "assistant", content: turn1.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
      { role: "system", content: [{ type: "text", text: "Plan mode is off." }] },
    ];
    const turn2 = await create(history);
    expect(turn2.stop_reason).toBe("end_turn");
    const sent = openai.requests.at(-1)!.body.messages;
    expect(sent.map((m: any) => m.role)).toEqual(["system", "user", "system", "assistant", "tool", "system"]);
    expect(sent.at(-1)).toEqual({ role: "system", content: "Plan mode is off." });
  });

  it("Gemini model: the system messages join systemInstruction; no other role reaches contents", async () => {
    const msg = await client.messages.create({ model: MODELS.gemini, max_tokens: 100, system: "You are terse.", messages: first() });
    expect(msg.stop_reason).toBe("end_turn");
    const body = gemini.requests.at(-1)!.body;
    expect(body.systemInstruction).toEqual({ parts: [{ text: "You are terse." }, { text: SKILLS }] });
    expect(body.contents.map((c: any) => c.role)).toEqual(["user"]);
  });

  it("sandbox key (simulator): a trailing system message does not turn answered tool results into another call", async () => {
    const sandbox = new Anthropic({ apiKey: SANDBOX, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const turn1 = await sandbox.messages.create({ model: MODELS.openai, max_tokens: 200, tools: [weather], messages: [{ role: "user", content: "get weather for Paris" }, { role: "system", content: SKILLS }] as any });
    const use = turn1.content.find((b) => b.type === "tool_use");
    expect(use).toBeDefined();
    const turn2 = await sandbox.messages.create({
      model: MODELS.openai, max_tokens: 200, tools: [weather],
      messages: [
        { role: "user", content: "get weather for Paris" },
        { role: "assistant", content: turn1.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use!.id, content: "sunny" }] },
        { role: "system", content: SKILLS },
      ] as any,
    });
    expect(turn2.stop_reason).toBe("end_turn");
    expect(turn2.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("sunny") });
  });

  it("a system message with an image is refused before any upstream call, naming the block", async () => {
    const before = openai.requests.length;
    const res = await postJson(`${gw.baseURL}/messages`, {
      model: MODELS.openai, max_tokens: 10,
      messages: [{ role: "user", content: "x" }, { role: "system", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] }],
    }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("messages[1].content[0].type");
    expect(openai.requests.length).toBe(before);
  });
});

describe("mid-conversation system messages on Anthropic models", () => {
  it("pass through as sent to a model that takes them (stream and not)", async () => {
    const msg = await client.messages.create({ model: MODELS.opus, max_tokens: 100, messages: first() });
    expect(msg.stop_reason).toBe("end_turn");
    expect(anthropic.requests.at(-1)!.body.messages).toEqual(first());
    const streamed = await client.messages.stream({ model: MODELS.opus, max_tokens: 100, messages: first() }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: "text" });
    expect(anthropic.requests.at(-1)!.body.messages).toEqual(first());
  });

  it("a model that refuses them answers Anthropic's 400, which Claude Code's fallback keys on; the retry without them works", async () => {
    const res = await postJson(`${gw.baseURL}/messages`, { model: MODELS.sonnet, max_tokens: 100, messages: first() }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    // Claude Code's check: a 400 whose message says "not supported" with "role" close to "system".
    expect(res.json.error.message).toMatch(/not supported/);
    expect(res.json.error.message).toMatch(/role.{0,3}system/);
    const err = await client.messages.create({ model: MODELS.sonnet, max_tokens: 100, messages: first() }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    // The fallback: the listing folded into the user turn.
    const retry = await client.messages.create({ model: MODELS.sonnet, max_tokens: 100, messages: [{ role: "user", content: `Weather in Paris?\n\n<system-reminder>${SKILLS}</system-reminder>` }] });
    expect(retry.stop_reason).toBe("end_turn");
  });
});
