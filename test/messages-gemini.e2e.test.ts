// A Gemini model from both client protocols: @anthropic-ai/sdk through /v1/messages (messages -> chat -> Gemini)
// and the openai client through /v1/chat/completions, against the fake Gemini upstream.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateChatCompletionChunk, validateMessage } from "../core/generated/validators.js";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("msg-gemini-e2e");
const model = "google/gemini-2.5-flash";
let gemini: FakeGemini;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  gemini = await startFakeGemini();
  gw = await startTestGateway({
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  anthropic = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
  openai = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

const tools = [
  { name: "get_weather", input_schema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object" as const, properties: { city: { type: "string" }, unit: { type: ["string", "null"] } }, required: ["city"], additionalProperties: false } },
  { name: "get_time", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } },
];

describe("Anthropic SDK -> Gemini model", () => {
  it("non-streaming and streaming text; the upstream sees Gemini's wire format", async () => {
    const msg = await anthropic.messages.create({ model, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
    expect(msg.content).toEqual([{ type: "text", text: "Hello from the fake Gemini upstream.", citations: null }]);
    expect(validateMessage(msg)).toBe(true);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    const seen = gemini.requests.at(-1)!;
    expect(seen.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(seen.headers["x-goog-api-key"]).toBe(FAKE_GEMINI_KEY);
    expect(seen.body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
    expect(seen.body.generationConfig.maxOutputTokens).toBe(100);

    const streamed = await anthropic.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    expect(streamed.content).toEqual([expect.objectContaining({ type: "text", text: "Hello from the fake Gemini upstream." })]);
    expect(streamed.usage.output_tokens).toBeGreaterThan(0);
    expect(gemini.requests.at(-1)!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  it.each([false, true])("two-step tool loop (stream=%s): STOP with function calls means tool_use", async (stream) => {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const call = (m: Anthropic.MessageParam[]) => stream
      ? anthropic.messages.stream({ model, max_tokens: 200, messages: m, tools }).finalMessage()
      : anthropic.messages.create({ model, max_tokens: 200, messages: m, tools });
    const first = await call(messages);
    expect(first.stop_reason).toBe("tool_use");
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    expect(uses.map((u) => [u.name, u.input])).toEqual([["get_weather", { city: "Paris", unit: "celsius" }], ["get_time", { city: "Tokyo", unit: "celsius" }]]);
    // The draft-07 schema was cut down to Gemini's subset.
    const decl = gemini.requests.at(-1)!.body.tools[0].functionDeclarations[0];
    expect(decl.parameters).toEqual({ type: "object", properties: { city: { type: "string" }, unit: { type: "string", nullable: true } }, required: ["city"] });
    messages.push({ role: "assistant", content: first.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: "user", content: uses.map((u) => ({ type: "tool_result" as const, tool_use_id: u.id, content: "18°C" })) });
    const second = await call(messages);
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]).toEqual(expect.objectContaining({ type: "text", text: "The weather is sunny." }));
    const contents = gemini.requests.at(-1)!.body.contents;
    expect(contents.map((c: any) => c.role)).toEqual(["user", "model", "user"]);
    expect(contents[2].parts).toEqual([
      { functionResponse: { name: "get_weather", response: { name: "get_weather", content: "18°C" } } },
      { functionResponse: { name: "get_time", response: { name: "get_time", content: "18°C" } } },
    ]);
  });
});

describe("Anthropic SDK -> Gemini model: what Gemini ignores is named", () => {
  it("service_tier and a text document's title, context and citations are listed in x-mg-dropped-params; the document's text arrives", async () => {
    const { data, response } = await anthropic.messages.create({
      model, max_tokens: 100, service_tier: "standard_only",
      messages: [{ role: "user", content: [
        { type: "document", source: { type: "text", media_type: "text/plain", data: "The sky is blue." }, title: "Sky facts", context: "From the 2024 almanac", citations: { enabled: true } },
        { type: "text", text: "What colour is the sky?" },
      ] }],
    }).withResponse();
    expect(data.type).toBe("message");
    expect(response.headers.get("x-mg-dropped-params")?.split(",")).toEqual([
      "service_tier", "messages[0].content[0].title", "messages[0].content[0].context", "messages[0].content[0].citations",
    ]);
    expect(JSON.stringify(gemini.requests.at(-1)!.body.contents)).toContain("The sky is blue.");
  });
});

describe("openai client -> Gemini model", () => {
  it("streams tool calls whole with their own indexes, usage once at the end", async () => {
    const stream = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "Weather?" }], tools: tools.map((t) => ({ type: "function" as const, function: { name: t.name, parameters: t.input_schema } })), stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls.map((c) => [c.index, c.function!.name, JSON.parse(c.function!.arguments!)])).toEqual([[0, "get_weather", { city: "Paris", unit: "celsius" }], [1, "get_time", { city: "Tokyo", unit: "celsius" }]]);
    expect(calls.every((c) => c.id?.startsWith("call_"))).toBe(true);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.filter((c) => c.usage).length).toBe(1);
    expect(chunks.at(-1)!.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it("finalChatCompletion with text; reasoningSummary asks for thoughts, which come back as reasoning_content", async () => {
    const res = await openai.chat.completions.stream({ model, messages: [{ role: "user", content: "Hi" }], providerOptions: { gem: { reasoningEffort: "low", reasoningSummary: "auto" } } } as never).finalChatCompletion();
    expect(res.choices[0]!.message.content).toBe("Hello from the fake Gemini upstream.");
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    const json: any = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], providerOptions: { gem: { reasoningSummary: "auto" } } } as never);
    expect(json.choices[0].message.reasoning_content).toBe("Thinking it over.");
    expect(json.usage.completion_tokens_details.reasoning_tokens).toBe(4);
  });

  it("max tokens -> finish_reason length; upstream 429 with RetryInfo -> Retry-After", async () => {
    const res = await openai.chat.completions.create({ model, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] });
    expect(res.choices[0]!.finish_reason).toBe("length");
    // A RetryInfo delay beyond the fallback's patience: no retry, the client is told when to come back.
    gemini.failures.push({ kind: "status", status: 429, retryDelay: "30s" });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.headers.get("retry-after")).toBe("30");
  });

  it("a Gemini stream cut mid-way becomes an error event", async () => {
    gemini.failures.push({ kind: "die-mid-stream", afterChunks: 2 });
    gemini.chunkDelayMs = 20; // the first chunks reach the client before the connection dies
    try {
      const stream = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
      await expect((async () => { for await (const _ of stream) { /* drain */ } })()).rejects.toBeInstanceOf(OpenAI.APIError);
    } finally {
      gemini.chunkDelayMs = 0;
    }
  });
});
