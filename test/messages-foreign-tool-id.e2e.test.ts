// A Messages client whose tool loop began on a chat host that issues ids like Kimi's `functions.get_weather:0` (the
// gateway gives the client the host's id as its tool_use id), continued on a Claude model (a model switch, or a
// fallback): Anthropic takes only [A-Za-z0-9_-] in tool ids, so the gateway must send the call and its result with a
// safe id, alike, or the turn is a 400.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("messages-foreign-tool-id");
const KIMI = "moonshot/kimi-k2";
const CLAUDE = "anthropic/claude-test";
const pricing = { input: "0.000001", output: "0.000002" };
let chat: FakeOpenAI;
let claude: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [chat, claude] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  // The chat host answers with a call under its own id form.
  chat.hook = (rec, res) => {
    if (rec.body?.stream) return false;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id: "chatcmpl-kimi", object: "chat.completion", created: 1770000000, model: rec.body.model,
      choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: [{ id: "functions.get_weather:0", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] } }],
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
    }));
    return true;
  };
  gw = await startTestGateway({
    providers: {
      moonshot: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      [KIMI]: { type: "language", endpoints: [{ provider: "moonshot", model: "kimi-k2", pricing }] },
      [CLAUDE]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat?.close(), claude?.close()]);
});

describe("Messages client: a tool loop begun on a chat host, continued on Claude", () => {
  it("the next turn on Claude is answered; Anthropic gets the call and its result under one safe id", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const tools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
    const question: Anthropic.MessageParam = { role: "user", content: "Weather in Paris?" };
    const first = await client.messages.create({ model: KIMI, max_tokens: 200, tools, messages: [question] });
    const call = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(call.id).toBe("functions.get_weather:0");

    const second = await client.messages.create({
      model: CLAUDE, max_tokens: 200, tools,
      messages: [question, { role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny, 21 C" }] }],
    });
    expect(second.role).toBe("assistant");
    const sent = claude.requests.at(-1)!.body as any;
    const use = sent.messages[1].content.find((b: any) => b.type === "tool_use");
    const result = sent.messages[2].content.find((b: any) => b.type === "tool_result");
    expect(use.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(result.tool_use_id).toBe(use.id);
  });

  it("count_tokens on Claude for that history counts it, as the generation sends it", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const counted = await client.messages.countTokens({
      model: CLAUDE,
      tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} } }],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: [{ type: "tool_use", id: "functions.get_weather:0", name: "get_weather", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "functions.get_weather:0", content: "sunny" }] },
      ],
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});
