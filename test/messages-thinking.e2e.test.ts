// Messages thinking on models reached through another protocol (issue 26), with the real @anthropic-ai/sdk
// (messages.stream and messages.create) through the gateway as it ships (SQLite store, full default pipeline, a key
// with a budget and rate limits): `thinking` reaches a thinking model as its own knob (reasoning_effort on
// OpenAI-compatible hosts, thinkingConfig on Gemini), the model's reasoning comes back as thinking blocks signed with
// what a replay needs, and a two-turn tool loop sends them back: each fake refuses the second turn when its reasoning
// does not come back the way the real host wants it (DeepSeek requires reasoning_content on the tool-call turn, Groq
// refuses any other field, OpenRouter's encrypted reasoning must come back unaltered, Gemini wants its thought
// signature on the function call). On a model that cannot think `thinking` is dropped and named, and a conversation
// that moves on to Claude never hands Anthropic the gateway's blobs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { reasoningFor, type ReasoningHost } from "./upstreams/openai-reasoning.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { expectAnthropicShape } from "./helpers/anthropic-sdk-schema.ts";

const KEY = testKey("messages-thinking");
const HOSTS: Record<ReasoningHost, string> = { reasoning: "groq", reasoning_content: "deepseek", reasoning_details: "openrouter" };
const model = (host: ReasoningHost) => `${HOSTS[host]}/thinker`;
const GEMINI = "google/gemini-2.5-flash";
const LLAMA = "groq/llama-3.3-70b";
const CLAUDE = "anthropic/claude-sonnet-4.5";

const chat: Partial<Record<ReasoningHost, FakeOpenAI>> = {};
let gemini: FakeGemini;
let claude: FakeAnthropic;
let gw: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  for (const host of Object.keys(HOSTS) as ReasoningHost[]) {
    chat[host] = await startFakeOpenAI();
    chat[host]!.reasoning = host;
  }
  [gemini, claude] = await Promise.all([startFakeGemini(), startFakeAnthropic()]);
  const pricing = { input: "0.000001", output: "0.000002" };
  const providers: Record<string, unknown> = {
    gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    anthropic: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
  };
  const models: Record<string, unknown> = {
    [GEMINI]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing }] },
    [LLAMA]: { type: "language", tags: ["tool-use"], endpoints: [{ provider: "groq", model: "llama-3.3-70b-versatile", pricing }] },
    [CLAUDE]: { type: "language", tags: ["tool-use", "reasoning"], max_tokens: 8192, endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5", pricing }] },
  };
  for (const [host, name] of Object.entries(HOSTS) as [ReasoningHost, string][]) {
    // A loopback URL says nothing about the host it plays: the convention the real host's URL gets, stated.
    providers[name] = { protocol: "openai", base_url: chat[host]!.baseUrl, api_key: "sk-fake-upstream", reasoning_field: host };
    models[model(host)] = { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: name, model: "thinker-1", pricing }] };
  }
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers, models,
    projects: { acme: { keys: [keyEntry("ci", KEY)], budget: { usd: "100", period: "month" }, rate_limits: { rpm: 10_000, tpm: 10_000_000 } } },
  });
  client = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([...Object.values(chat).map((f) => f!.close()), gemini?.close(), claude?.close()]);
});

const tools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
type Params = Omit<Anthropic.MessageCreateParamsNonStreaming, "stream">;

/** One answer through the SDK: the stream's final message (every event checked against the SDK's types), or create's. */
async function ask(streamed: boolean, p: Params): Promise<Anthropic.Message> {
  if (!streamed) {
    const msg = await client.messages.create(p);
    expectAnthropicShape("Message", msg);
    return msg;
  }
  const stream = client.messages.stream(p);
  for await (const e of stream) expectAnthropicShape("RawMessageStreamEvent", e, `event ${e.type}`);
  return stream.finalMessage();
}

/** The SDK's turn 2: the history, the answer as it came (thinking blocks included), the tool's result. */
function followUp(p: Params, answer: Anthropic.Message): Params {
  const use = answer.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
  return { ...p, messages: [...p.messages, { role: "assistant", content: answer.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "21C and sunny" }] }] };
}

const lastChat = (host: ReasoningHost) => chat[host]!.requests.at(-1)!.body;

describe.each([true, false])("OpenAI-compatible thinking hosts (stream=%s)", (streamed) => {
  it.each(Object.keys(HOSTS) as ReasoningHost[])("%s: the budget reaches the host as an effort, the reasoning comes back signed and goes back on turn 2", async (host) => {
    const p: Params = { model: model(host), max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 2000 }, tools, messages: [{ role: "user", content: "Weather in Paris?" }] };
    const first = await ask(streamed, p);
    expect(lastChat(host).reasoning_effort).toBe("medium");
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    const thinking = first.content[0] as Anthropic.ThinkingBlock;
    // OpenRouter's summary is text too; its encrypted reasoning rides in the signature with it.
    expect(thinking.thinking).toBe(reasoningFor("medium"));
    expect(thinking.signature).toMatch(/^mgr1\./);
    expect(first.stop_reason).toBe("tool_use");

    const second = await ask(streamed, followUp(p, first));
    expect(second.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect((second.content[1] as Anthropic.TextBlock).text).toBe("Hello from the fake upstream, streaming word by word.");
    const turn = lastChat(host).messages.find((m: any) => m.role === "assistant");
    if (host === "reasoning_details") {
      // The encrypted entry as the host made it (the fake refuses one it did not make), beside the summary text.
      expect(turn.reasoning_details).toEqual([expect.objectContaining({ type: "reasoning.encrypted", format: "openai-responses-v1" })]);
      expect(turn.reasoning).toBe(reasoningFor("medium"));
    } else {
      expect(turn[host]).toBe(reasoningFor("medium"));
      expect(Object.keys(turn).filter((k) => k.startsWith("reasoning"))).toEqual([host]);
    }
  });
});

describe.each([true, false])("a Gemini model (stream=%s)", (streamed) => {
  it("Claude Code's adaptive thinking at effort high becomes a thinking budget with thoughts; the thought signature returns with the call", async () => {
    const p = { model: GEMINI, max_tokens: 8000, thinking: { type: "adaptive" }, output_config: { effort: "high" }, tools, messages: [{ role: "user", content: "Weather in Paris?" }] } as unknown as Params;
    const first = await ask(streamed, p);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 4096, includeThoughts: true });
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((first.content[0] as Anthropic.ThinkingBlock).thinking).toBe("Thinking it over.");
    expect((first.content[0] as Anthropic.ThinkingBlock).signature).toMatch(/^mgr1\./);
    // The fake refuses a function call replayed without its thought signature, as Gemini does.
    const second = await ask(streamed, followUp(p, first));
    expect(second.content.filter((b) => b.type === "text").map((b) => (b as Anthropic.TextBlock).text).join("")).toBe("The weather is sunny.");
    const model = gemini.requests.at(-1)!.body.contents.find((c: any) => c.role === "model");
    expect(model.parts[0]).toEqual({ functionCall: { name: "get_weather", args: { city: "Paris", unit: "celsius" } }, thoughtSignature: "CiQB+/8BAgP+EA==" });
  });
});

describe("where thinking cannot go", () => {
  it("a model that cannot think: thinking is dropped and named in x-mg-dropped-params, no effort reaches the host", async () => {
    const before = chat.reasoning!.requests.length;
    const { data, response } = await client.messages.create({ model: LLAMA, max_tokens: 100, thinking: { type: "enabled", budget_tokens: 2000 }, messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(data.content.map((b) => b.type)).toEqual(["text"]);
    expect(response.headers.get("x-mg-dropped-params")).toBe("thinking");
    expect(chat.reasoning!.requests.length).toBe(before + 1);
    expect(lastChat("reasoning")).not.toHaveProperty("reasoning_effort");
  });

  it("the conversation moves on to Claude: Anthropic never gets the gateway's thinking blocks; the tool loop goes on without thinking, named", async () => {
    const p: Params = { model: model("reasoning"), max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 2000 }, tools, messages: [{ role: "user", content: "Weather in Paris?" }] };
    const first = await ask(true, p);
    expect(first.content[0]!.type).toBe("thinking");
    // The fake Anthropic refuses a thinking block it did not sign, and a tool loop that does not start with thinking.
    const { data, response } = await client.messages.create({ ...followUp(p, first), model: CLAUDE }).withResponse();
    expect(data.stop_reason).toBe("end_turn");
    expect(response.headers.get("x-mg-dropped-params")).toBe("messages[1].content[0],thinking");
    const sent = claude.requests.at(-1)!.body;
    expect(sent.messages[1].content.map((b: any) => b.type)).toEqual(["tool_use"]);
    expect(sent.thinking).toEqual({ type: "disabled" });
  });

  it("the conversation moves from Gemini to an OpenAI-compatible model (/model): its ids lose the thought signature, calls and results alike", async () => {
    const p = { model: GEMINI, max_tokens: 8000, thinking: { type: "adaptive" }, tools, messages: [{ role: "user", content: "Weather in Paris?" }] } as unknown as Params;
    const first = await ask(false, p);
    const id = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!.id;
    expect(id).toMatch(/^call_[0-9a-f]+__sig__/);
    const second = await ask(false, { ...followUp(p, first), model: model("reasoning") });
    expect(second.stop_reason).toBe("end_turn");
    const sent = lastChat("reasoning").messages;
    const call = sent.find((m: any) => m.role === "assistant").tool_calls[0].id;
    // OpenAI refuses ids over 40 characters; the signature alone makes Gemini's longer.
    expect(call).toBe(id.slice(0, id.indexOf("__sig__")));
    expect(call.length).toBeLessThanOrEqual(40);
    expect(sent.find((m: any) => m.role === "tool").tool_call_id).toBe(call);
  });
});
