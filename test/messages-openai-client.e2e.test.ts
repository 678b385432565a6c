// Chat completions against an Anthropic model with the official openai client: the request is translated to the
// Messages protocol and the answer (JSON or stream) back, event by event.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateChatCompletion, validateChatCompletionChunk } from "../core/generated/validators.js";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("msg-oai-e2e");
const model = "anthropic/claude-sonnet-4.5";
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: {
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] },
      [model]: { type: "language", max_tokens: 64000, endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

describe("openai client -> Anthropic model", () => {
  it("non-streaming: content, finish_reason and usage in chat shape; system hoisted, max_tokens defaulted", async () => {
    const res = await client.chat.completions.create({ model, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }], user: "u-1", stop: "END" });
    expect(res.object).toBe("chat.completion");
    expect(res.choices[0]!.message.content).toBe("Hello from the fake Anthropic upstream.");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    expect(validateChatCompletion(res)).toBe(true);
    const seen = anthropic.requests.at(-1)!.body;
    expect(seen.system).toEqual([{ type: "text", text: "Be brief." }]);
    expect(seen.messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(seen.max_tokens).toBe(64000);
    expect(seen.metadata).toEqual({ user_id: "u-1" });
    expect(seen.stop_sequences).toEqual(["END"]);
  });

  it("streams parallel tool calls with OpenAI tool indexes; the client assembles the arguments", async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Weather and time in Paris?" }], tools, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks.filter((c) => c.choices[0]?.delta.role).length).toBe(1);
    const calls = new Map<number, { id?: string; name?: string; args: string }>();
    for (const c of chunks) {
      for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
        const cur = calls.get(tc.index) ?? { args: "" };
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.name = tc.function.name;
        cur.args += tc.function?.arguments ?? "";
        calls.set(tc.index, cur);
      }
    }
    // The text block before the tools is Anthropic block 0, yet the first tool call is OpenAI index 0.
    expect([...calls.keys()]).toEqual([0, 1]);
    expect(calls.get(0)).toEqual({ id: "toolu_fake0", name: "get_weather", args: JSON.stringify({ city: "Paris", unit: "celsius" }) });
    expect(JSON.parse(calls.get(1)!.args)).toEqual({ city: "Tokyo", unit: "celsius" });
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish!.choices[0]!.finish_reason).toBe("tool_calls");
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it("the stream helper's finalChatCompletion works (role and finish_reason present), and a tool loop round-trips", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await client.chat.completions.stream({ model, messages, tools, parallel_tool_calls: false }).finalChatCompletion();
    const msg = first.choices[0]!.message;
    expect(msg.tool_calls).toHaveLength(1);
    expect(anthropic.requests.at(-1)!.body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    messages.push(msg as OpenAI.ChatCompletionMessageParam);
    messages.push({ role: "tool", tool_call_id: msg.tool_calls![0]!.id, content: "18°C" });
    const second = await client.chat.completions.create({ model, messages, tools });
    expect(second.choices[0]!.message.content).toBe("The weather is sunny.");
    const sent = anthropic.requests.at(-1)!.body.messages;
    expect(sent[1].content.at(-1)).toEqual({ type: "tool_use", id: "toolu_fake0", name: "get_weather", input: { city: "Paris", unit: "celsius" } });
    expect(sent[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake0", content: "18°C" }] });
  });

  it("stream without include_usage carries no usage chunk", async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello from the fake Anthropic upstream.");
  });

  it("reasoningEffort becomes a thinking budget; thinking comes back with its signature and is replayed", async () => {
    const res: any = await client.chat.completions.create({ model, max_tokens: 3000, temperature: 0.5, messages: [{ role: "user", content: "Think" }], providerOptions: { claude: { reasoningEffort: "medium" } } } as never);
    const up = anthropic.requests.at(-1)!.body;
    expect(up.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(up.max_tokens).toBe(3000); // the client's limit holds the thinking
    expect(up.temperature).toBeUndefined();
    const m = res.choices[0].message;
    expect(m.reasoning_content).toContain("think");
    expect(m.thinking_blocks[0].signature).toMatch(/^Eq/);
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "Think" }, m, { role: "user", content: "Again" }] } as never);
    expect(anthropic.requests.at(-1)!.body.messages[1].content[0]).toEqual({ type: "thinking", thinking: m.reasoning_content, signature: m.thinking_blocks[0].signature });
  });

  it("a dollar thinkingBudget becomes tokens through the output price", async () => {
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "Think" }], providerOptions: { claude: { thinkingBudget: 0.03 } } } as never);
    expect(anthropic.requests.at(-1)!.body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
  });

  it("caching auto places markers on the translated body; cache tokens come back in usage", async () => {
    const body = { model, messages: [{ role: "system", content: "A long system prompt." }, { role: "user", content: "Hi" }], tools, providerOptions: { gateway: { caching: "auto" } } };
    const a = await postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${LIVE}` });
    const up = anthropic.requests.at(-1)!.body;
    expect(up.tools.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(up.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(a.json.usage.prompt_tokens_details.cache_write_tokens).toBeGreaterThan(0);
    const b = await postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${LIVE}` });
    expect(b.json.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("cache_control on chat parts is stripped before an OpenAI upstream", async () => {
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }] }, { authorization: `Bearer ${LIVE}` });
    expect(openai.requests.at(-1)!.body.messages[0].content[0]).toEqual({ type: "text", text: "Hi" });
  });

  it("knobs for a non-native model are dropped and named in x-mg-dropped-params", async () => {
    const res = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], providerOptions: { claude: { thinkingBudget: 0.01 } } }, { authorization: `Bearer ${LIVE}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-mg-dropped-params")).toBe("providerOptions.claude.thinkingBudget");
  });

  it.each([
    [{ n: 2 }, "n"],
    [{ temperature: 1.5 }, "temperature"],
    [{ logprobs: true }, "logprobs"],
    [{ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] }, "messages[0].content[0]"],
  ])("a request the Anthropic upstream cannot honour gets 400 naming the field (%j)", async (extra, field) => {
    const before = anthropic.requests.length;
    const res = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "Hi" }], ...extra }, { authorization: `Bearer ${LIVE}` });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("INVALID_REQUEST");
    expect(res.json.error.details.field).toBe(field);
    expect(anthropic.requests.length).toBe(before);
  });

  it("images: data URLs become base64 sources, https URLs url sources", async () => {
    await client.chat.completions.create({ model, messages: [{ role: "user", content: [
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "high" } },
    ] }] });
    expect(anthropic.requests.at(-1)!.body.messages[0].content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
  });

  it("a mid-stream upstream error becomes an OpenAI error event the client throws", async () => {
    anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
    await expect((async () => { for await (const _ of stream) { /* drain */ } })()).rejects.toBeInstanceOf(OpenAI.APIError);
  });
});

describe("structured output on an Anthropic model", () => {
  const schema = { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"], additionalProperties: false };
  it.each([false, true])("response_format json_schema arrives as JSON content (stream=%s)", async (stream) => {
    const req = { model, messages: [{ role: "user" as const, content: "Where?" }], response_format: { type: "json_schema" as const, json_schema: { name: "place", schema } } };
    const res = stream ? await client.chat.completions.stream(req).finalChatCompletion() : await client.chat.completions.create(req);
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual({ city: "Paris", unit: "celsius" });
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(anthropic.requests.at(-1)!.body.tool_choice).toEqual({ type: "tool", name: "json_output" });
  });
});
