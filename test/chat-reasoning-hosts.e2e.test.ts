// Chat clients' tool loops on reasoning models of OpenAI-compatible hosts that disagree on where reasoning goes back
// (issue 26), with the real openai SDK through the gateway as it ships (gateway.yaml: SQLite store, full default
// pipeline, the default catalog, a key with a budget and rate limits). The client sends turn 1's reasoning back the way
// opencode (@ai-sdk/openai-compatible) and Qwen Code do — as `reasoning_content`, whatever field it came in — or as
// `reasoning`; each fake refuses what its host refuses (Groq: any field but `reasoning`; DeepSeek: a tool-call turn
// without `reasoning_content`; OpenRouter: encrypted reasoning it did not make), and the gateway moves the text to the
// host's field. A model that reasons but takes no effort (xai/grok-4.20, catalog reasoning_effort: false) gets none from
// chat, Messages (Claude Code's adaptive thinking), Responses (Codex's reasoning.effort) or Gemini (Gemini CLI's
// thinking budget) clients, named.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { reasoningFor, type ReasoningHost } from "./upstreams/openai-reasoning.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";

/** The gateway model on each host, and the provider of gateway.yaml (OpenRouter added) the fake stands in for. */
const HOSTS: Record<ReasoningHost, { model: string; provider: string }> = {
  reasoning: { model: "openai/gpt-oss-120b", provider: "groq" },
  reasoning_content: { model: "deepseek/deepseek-flash", provider: "deepseek" },
  reasoning_details: { model: "openrouter/o4-mini", provider: "openrouter" },
};
const GROK = "xai/grok-4.20";
const ANSWER = "Hello from the fake upstream, streaming word by word.";
/** The reasoning the fake hosts give at the effort the client asks for. */
const THOUGHT = reasoningFor("medium");

const hosts: Partial<Record<ReasoningHost, FakeOpenAI>> = {};
let xai: FakeOpenAI;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  for (const host of Object.keys(HOSTS) as ReasoningHost[]) {
    hosts[host] = await startFakeOpenAI();
    hosts[host]!.reasoning = host;
  }
  [xai, openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  xai.effortRefusedBy = ["grok-4.20-0309-reasoning"];
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.openrouter = { protocol: "openai", api_key: "${OPENROUTER_API_KEY}" };
  // The fakes listen on loopback, which says nothing about the host: each provider names its convention, as an
  // operator does for a host the gateway does not recognise by its URL.
  for (const [host, { provider }] of Object.entries(HOSTS) as [ReasoningHost, { provider: string }][]) {
    config.providers[provider] = { ...config.providers[provider], base_url: hosts[host]!.baseUrl, reasoning_field: host };
  }
  config.providers.xai.base_url = xai.baseUrl;
  config.models["openrouter/o4-mini"] = {
    type: "language", tags: ["tool-use", "reasoning"],
    endpoints: [{ provider: "openrouter", model: "openai/o4-mini", pricing: { input: "0.0000011", output: "0.0000044" } }],
  };
  const keys = { GROQ_API_KEY: "sk-fake-upstream", DEEPSEEK_API_KEY: "sk-fake-upstream", OPENROUTER_API_KEY: "sk-fake-upstream", XAI_API_KEY: "sk-fake-upstream" };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), ...keys } });
  client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([...Object.values(hosts).map((f) => f!.close()), xai?.close(), openai?.close(), anthropic?.close()]);
});

const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

interface Answer { message: Record<string, any>; dropped: string | null }

/** One answer: the JSON message, or the message a client joins from the stream's deltas. */
async function ask(model: string, messages: OpenAI.ChatCompletionMessageParam[], stream: boolean): Promise<Answer> {
  const params = { model, messages, tools, reasoning_effort: "medium" as const };
  if (!stream) {
    const { data, response } = await client.chat.completions.create(params).withResponse();
    return { message: data.choices[0]!.message, dropped: response.headers.get("x-mg-dropped-params") };
  }
  const { data, response } = await client.chat.completions.create({ ...params, stream: true }).withResponse();
  const message: Record<string, any> = { role: "assistant", content: "", tool_calls: [] };
  for await (const chunk of data) {
    const d: any = chunk.choices[0]?.delta ?? {};
    if (d.content) message.content += d.content;
    for (const k of ["reasoning", "reasoning_content"]) if (d[k]) message[k] = (message[k] ?? "") + d[k];
    if (d.reasoning_details) message.reasoning_details = [...(message.reasoning_details ?? []), ...d.reasoning_details];
    for (const t of d.tool_calls ?? []) {
      const cur = (message.tool_calls[t.index] ??= { id: t.id, type: "function", function: { name: "", arguments: "" } });
      cur.function.name += t.function?.name ?? "";
      cur.function.arguments += t.function?.arguments ?? "";
    }
  }
  return { message, dropped: response.headers.get("x-mg-dropped-params") };
}

/** Turn 2 as opencode and Qwen Code build it: the reasoning text, read from either field, sent back in `echo`. */
function followUp(first: OpenAI.ChatCompletionMessageParam[], answer: Record<string, any>, echo: "reasoning_content" | "reasoning"): OpenAI.ChatCompletionMessageParam[] {
  const call = answer.tool_calls[0];
  const turn = { role: "assistant", content: answer.content ?? "", [echo]: answer.reasoning_content ?? answer.reasoning, tool_calls: answer.tool_calls } as OpenAI.ChatCompletionAssistantMessageParam;
  return [...first, turn, { role: "tool", tool_call_id: call.id, content: "21C and sunny" }];
}

describe.each([true, false])("a two-turn tool loop, reasoning echoed back (stream=%s)", (stream) => {
  describe.each(Object.keys(HOSTS) as ReasoningHost[])("on a %s host", (host) => {
    it.each(["reasoning_content", "reasoning"] as const)("sent back as %s: turn 2 is answered, the host gets the text in its own field", async (echo) => {
      const model = HOSTS[host].model;
      const first: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
      const a = await ask(model, first, stream);
      expect(a.message.tool_calls.map((t: any) => t.function.name)).toEqual(["get_weather"]);
      // The answer in the host's field, as the host gave it (opencode and Qwen Code read reasoning_content and reasoning).
      expect(a.message[host === "reasoning_details" ? "reasoning" : host]).toBe(THOUGHT);

      const b = await ask(model, followUp(first, a.message, echo), stream);
      expect(b.message.content).toBe(ANSWER);
      expect(b.message.tool_calls ?? []).toEqual([]);
      // Nothing was lost on the way: the text only moved.
      expect(b.dropped).toBeNull();
      const sent = hosts[host]!.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant");
      const field = host === "reasoning_details" ? "reasoning" : host;
      expect(sent[field]).toBe(THOUGHT);
      expect(Object.keys(sent).filter((k) => k.startsWith("reasoning"))).toEqual([field]);
    });
  });
});

describe("reasoning another host made", () => {
  it("Claude's signed reasoning_details and thinking_blocks cannot go to Groq: dropped and named, the text goes as reasoning", async () => {
    const messages = [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant", content: "", reasoning_content: "Claude thought.",
        reasoning_details: [{ type: "reasoning.text", text: "Claude thought.", signature: "c2lnbmVk", format: "anthropic-claude-v1", index: 0 }],
        thinking_blocks: [{ type: "thinking", thinking: "Claude thought.", signature: "c2lnbmVk" }],
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "21C and sunny" },
    ] as OpenAI.ChatCompletionMessageParam[];
    const b = await ask(HOSTS.reasoning.model, messages, false);
    expect(b.message.content).toBe(ANSWER);
    expect(b.dropped).toBe("messages[1].reasoning_details,messages[1].thinking_blocks");
    const sent = hosts.reasoning!.requests.at(-1)!.body.messages[1];
    expect(Object.keys(sent).filter((k) => k.startsWith("reasoning") || k === "thinking_blocks")).toEqual(["reasoning"]);
    expect(sent.reasoning).toBe("Claude thought.");
  });
});

describe("a model that reasons but takes no effort (xai/grok-4.20)", () => {
  it("chat: reasoning_effort is not sent (xAI would answer 400) and is named", async () => {
    const { data, response } = await client.chat.completions.create({ model: GROK, reasoning_effort: "high", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe(ANSWER);
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(xai.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
  });

  it("Messages: Claude Code's adaptive thinking at effort high reaches grok-4.20 without an effort", async () => {
    const messages = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 }).messages;
    const { data, response } = await messages.create({ model: GROK, max_tokens: 4000, thinking: { type: "adaptive" }, output_config: { effort: "high" }, messages: [{ role: "user", content: "Hi" }] } as any).withResponse();
    expect(data.content.map((b: any) => b.text)).toEqual([ANSWER]);
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(xai.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
  });

  it("Responses: Codex's reasoning.effort reaches grok-4.20 without an effort", async () => {
    const { data, response } = await client.responses.create({ model: GROK, reasoning: { effort: "medium" }, input: "Hi" }).withResponse();
    expect(data.output_text).toBe(ANSWER);
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(xai.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
  });

  it("Gemini API: Gemini CLI's thinking budget reaches grok-4.20 without an effort", async () => {
    const r = await postJson(`${gw.url}/api/v1beta/models/${GROK}:generateContent`, {
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      generationConfig: { thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } },
    }, { "x-goog-api-key": SHIPPED_KEY });
    expect(r.status, r.text).toBe(200);
    expect(r.json.candidates[0].content.parts.map((p: any) => p.text).join("")).toBe(ANSWER);
    expect(r.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(xai.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
  });
});
