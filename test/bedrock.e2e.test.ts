// Bedrock end to end (issue 15): the official openai and @anthropic-ai/sdk clients against a real gateway in front of
// the fake Bedrock, which recomputes every SigV4 signature and streams real event-stream frames split across TCP
// writes. Llama goes through Converse (translated); Claude through InvokeModel (Messages native) and, on a provider
// with `bedrock_claude_api: converse`, through Converse; throttling falls back to another provider.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { FAKE_AWS, FAKE_BEDROCK_API_KEY, BEDROCK_TEXT, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateChatCompletion, validateChatCompletionChunk, validateMessage } from "../core/generated/validators.js";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("bedrock-e2e");
const LLAMA = "us.meta.llama3-3-70b-instruct-v1:0";
const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
let bedrock: FakeBedrock;
let backup: FakeOpenAI;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

const sigv4 = { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey };
const price = { input: "0.00000072", output: "0.00000072" };

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  backup = await startFakeOpenAI({ text: "backup answers" });
  gw = await startTestGateway({
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: {
      aws: { ...sigv4, base_url: bedrock.baseUrl },
      "aws-key": { protocol: "bedrock", region: FAKE_AWS.region, base_url: bedrock.baseUrl, api_key: FAKE_BEDROCK_API_KEY },
      "aws-converse": { ...sigv4, base_url: bedrock.baseUrl, bedrock_claude_api: "converse" },
      "aws-wrong-region": { ...sigv4, region: "eu-central-1", base_url: bedrock.baseUrl },
      "aws-bad-secret": { ...sigv4, aws_secret_access_key: "not-the-secret", base_url: bedrock.baseUrl },
      backup: { protocol: "openai", base_url: backup.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "meta/llama-3.3-70b": { endpoints: [{ provider: "aws", model: LLAMA, pricing: price }] },
      "test/llama-key": { endpoints: [{ provider: "aws-key", model: LLAMA, pricing: price }] },
      "anthropic/claude-sonnet-4.5": { max_tokens: 64000, endpoints: [{ provider: "aws", model: CLAUDE, pricing: { input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" } }] },
      "test/claude-converse": { endpoints: [{ provider: "aws-converse", model: CLAUDE, pricing: { input: "0.000003", output: "0.000015" } }] },
      "test/fallback": { endpoints: [{ provider: "aws", model: LLAMA, pricing: price }, { provider: "backup", model: "gpt-4o-mini" }] },
      "test/wrong-region": { endpoints: [{ provider: "aws-wrong-region", model: LLAMA }] },
      "test/bad-secret": { endpoints: [{ provider: "aws-bad-secret", model: LLAMA }] },
      "amazon/titan-embed-text-v2": { type: "embedding", dimensions: 1024, endpoints: [{ provider: "aws", model: "amazon.titan-embed-text-v2:0", pricing: { input: "0.00000002" } }] },
      "cohere/embed-english-v3.0": { type: "embedding", dimensions: 1024, endpoints: [{ provider: "aws", model: "cohere.embed-english-v3", pricing: { input: "0.0000001" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  openai = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
  anthropic = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
  await backup?.close();
});

beforeEach(() => {
  bedrock.failures.length = 0;
  bedrock.requests.length = 0;
  backup.requests.length = 0;
});

const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

describe("openai client -> Llama on Bedrock (Converse)", () => {
  it("text: a signed Converse call, the path's `:` percent-encoded, usage", async () => {
    const res = await openai.chat.completions.create({ model: "meta/llama-3.3-70b", max_tokens: 100, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] });
    expect(validateChatCompletion(res)).toBe(true);
    expect(res.choices[0]!.message.content).toBe(BEDROCK_TEXT);
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    const seen = bedrock.requests.at(-1)!;
    expect(seen.path).toBe("/model/us.meta.llama3-3-70b-instruct-v1%3A0/converse");
    expect(seen.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    expect(seen.body).toEqual({ system: [{ text: "Be brief." }], messages: [{ role: "user", content: [{ text: "Hi" }] }], inferenceConfig: { maxTokens: 100 } });
  });

  it("stream: frames split across reads arrive as chunks, usage once at the end", async () => {
    const stream = await openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(BEDROCK_TEXT);
    expect(chunks.filter((c) => c.usage).length).toBe(1);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0);
    expect(bedrock.requests.at(-1)!.path).toBe("/model/us.meta.llama3-3-70b-instruct-v1%3A0/converse-stream");
  });

  it.each([false, true])("tools, two steps (stream=%s): toolUse -> tool_calls, tool results go back as toolResult with a toolConfig", async (stream) => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris and Tokyo?" }];
    const call = (m: OpenAI.ChatCompletionMessageParam[]) => stream
      ? openai.chat.completions.stream({ model: "meta/llama-3.3-70b", messages: m, tools }).finalChatCompletion()
      : openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: m, tools });
    const first = await call(messages);
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const calls = first.choices[0]!.message.tool_calls! as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([["get_weather", { city: "Paris" }], ["get_time", { city: "Tokyo" }]]);
    expect(calls.every((c) => c.id.startsWith("tooluse_"))).toBe(true);
    messages.push(first.choices[0]!.message as OpenAI.ChatCompletionMessageParam);
    for (const c of calls) messages.push({ role: "tool", tool_call_id: c.id, content: "18C" });
    const second = await call(messages);
    expect(second.choices[0]!.message.content).toBe("The weather is sunny.");
    const sent = bedrock.requests.at(-1)!.body;
    expect(sent.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent.messages[2].content.map((b: any) => b.toolResult.toolUseId)).toEqual(calls.map((c) => c.id));
    expect(sent.toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["get_weather", "get_time"]);
  });

  it("an exception frame mid-stream becomes the client's stream error", async () => {
    bedrock.failures.push({ kind: "exception", afterEvents: 3, type: "modelStreamErrorException" });
    const stream = await openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }], stream: true });
    let text = "";
    const err = await (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ""; })().then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toContain("modelStreamErrorException");
    expect(text.length).toBeGreaterThan(0); // the stream had started: no silent fallback
  });

  it("a corrupted frame (CRC mismatch) mid-stream is a stream error, not garbage text", async () => {
    bedrock.failures.push({ kind: "corrupt", afterEvents: 3 });
    const stream = await openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }], stream: true });
    let text = "";
    const err = await (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ""; })().then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toMatch(/corrupt event stream/);
    expect(text).not.toContain("corrupted");
  });

  it("a Bedrock API key is sent as a bearer token (no signature)", async () => {
    const res = await openai.chat.completions.create({ model: "test/llama-key", messages: [{ role: "user", content: "Hi" }] });
    expect(res.choices[0]!.message.content).toBe(BEDROCK_TEXT);
    expect(bedrock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${FAKE_BEDROCK_API_KEY}`);
    expect(bedrock.requests.at(-1)!.headers["x-amz-date"]).toBeUndefined();
  });

  it("ValidationException reaches the client as a 400 with Bedrock's message", async () => {
    bedrock.failures.push({ kind: "status", status: 400, type: "ValidationException", message: "The model returned the following errors: Input is too long for requested model." });
    const err = await openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain("ValidationException: The model returned the following errors: Input is too long");
  });
});

describe("openai client Responses API -> Llama on Bedrock (responses -> chat -> Converse)", () => {
  it("text and stream", async () => {
    const r = await openai.responses.create({ model: "meta/llama-3.3-70b", input: "Hi", instructions: "Be brief.", store: false });
    expect(r.output_text).toBe(BEDROCK_TEXT);
    expect(bedrock.requests.at(-1)!.body.system).toEqual([{ text: "Be brief." }]);
    const events: string[] = [];
    const stream = await openai.responses.create({ model: "meta/llama-3.3-70b", input: "Hi", stream: true, store: false });
    let text = "";
    for await (const e of stream) {
      events.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    expect(text).toBe(BEDROCK_TEXT);
    expect(events.at(-1)).toBe("response.completed");
    expect(bedrock.requests.at(-1)!.action).toBe("converse-stream");
  });
});

describe("embeddings through Bedrock (InvokeModel)", () => {
  it("Titan: one call per input, dimensions and unit vectors asked for, tokens summed", async () => {
    const r = await openai.embeddings.create({ model: "amazon/titan-embed-text-v2", input: ["a cat", "a kitten", "a lighthouse"], dimensions: 256 });
    expect(r.data.map((d) => [d.index, d.embedding.length])).toEqual([[0, 256], [1, 256], [2, 256]]);
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
    const sent = bedrock.requests.filter((q) => q.action === "invoke");
    expect(sent.map((q) => q.body.inputText).sort()).toEqual(["a cat", "a kitten", "a lighthouse"]);
    expect(sent.every((q) => q.path === "/model/amazon.titan-embed-text-v2%3A0/invoke" && q.body.dimensions === 256 && q.body.normalize === true)).toBe(true);
  });

  it("Cohere: batches of 96 texts, vectors back in input order", async () => {
    const input = Array.from({ length: 100 }, (_, i) => `text ${i}`);
    const r = await openai.embeddings.create({ model: "cohere/embed-english-v3.0", input });
    expect(r.data.length).toBe(100);
    expect(bedrock.requests.map((q) => q.body.texts.length)).toEqual([96, 4]);
    expect(bedrock.requests[0]!.body.input_type).toBe("search_document");
    // The 100th vector is the fake's vector for "text 99": order survived the batching.
    const again = await openai.embeddings.create({ model: "cohere/embed-english-v3.0", input: ["text 99"] });
    expect(r.data[99]!.embedding).toEqual(again.data[0]!.embedding);
  });
});

describe("bad signing configuration -> a clear error, not a crash", () => {
  it.each([["test/bad-secret", "does not match the signature you provided"], ["test/wrong-region", "Credential should be scoped to a valid region"]])("%s", async (model, text) => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toContain("InvalidSignatureException");
    expect(r.json.error.message).toContain(text);
    expect(r.headers.get("x-should-retry")).toBe("false");
    // And the gateway is still fine.
    expect((await openai.chat.completions.create({ model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }] })).choices[0]!.message.content).toBe(BEDROCK_TEXT);
  });
});

describe("fallback from Bedrock on throttling", () => {
  it("JSON: ThrottlingException (429) -> the next provider answers", async () => {
    bedrock.failures.push({ kind: "status", status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again." });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "test/fallback", messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe("backup answers");
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.errorCode ?? a.status])).toEqual([["aws", "UPSTREAM_ERROR"], ["backup", 200]]);
  });

  it("ModelErrorException (424, the model failed on the request) is retried like a 5xx, not taken for the gateway's setup", async () => {
    bedrock.failures.push({ kind: "status", status: 424, type: "ModelErrorException", message: "The model failed" });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "meta/llama-3.3-70b", messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(r.status).toBe(200); // the model's only endpoint, asked again
    expect(r.json.choices[0].message.content).toBe(BEDROCK_TEXT);
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.errorCode ?? a.status])).toEqual([["aws", "UPSTREAM_ERROR"], ["aws", 200]]);
  });

  it("stream: ThrottlingException before the stream, and a throttlingException frame as the first event, both fall back", async () => {
    for (const f of [{ kind: "status", status: 429, type: "ThrottlingException" }, { kind: "exception", afterEvents: 0, type: "throttlingException" }] as const) {
      bedrock.failures.push(f);
      const stream = await openai.chat.completions.create({ model: "test/fallback", messages: [{ role: "user", content: "Hi" }], stream: true });
      let text = "";
      for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
      expect(text, f.kind).toBe("backup answers");
    }
    expect(bedrock.requests.length).toBe(2);
    expect(backup.requests.length).toBe(2);
  });
});

describe("@anthropic-ai/sdk -> Claude on Bedrock (InvokeModel, native)", () => {
  it("text and stream: the Anthropic body with anthropic_version, no model/stream; betas Bedrock refuses are dropped", async () => {
    const msg = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
      { headers: { "anthropic-beta": "interleaved-thinking-2025-05-14,prompt-caching-2024-07-31" } });
    expect(validateMessage(msg)).toBe(true);
    expect(msg.content).toEqual([{ type: "text", text: BEDROCK_TEXT }]);
    expect(msg.id).toMatch(/^msg_bdrk_/);
    const seen = bedrock.requests.at(-1)!;
    expect(seen.path).toBe("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke");
    expect(seen.body).toEqual({ anthropic_version: "bedrock-2023-05-31", max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }], anthropic_beta: ["interleaved-thinking-2025-05-14"] });

    const events: string[] = [];
    const s = anthropic.messages.stream({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    s.on("streamEvent", (e) => events.push(e.type));
    const streamed = await s.finalMessage();
    expect(streamed.content).toEqual([expect.objectContaining({ type: "text", text: BEDROCK_TEXT })]);
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");
    expect(bedrock.requests.at(-1)!.path).toBe("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream");
  });

  it("prompt caching: cache_control passes through, cache reads/writes come back in usage", async () => {
    const system: Anthropic.TextBlockParam[] = [{ type: "text", text: "A long, stable system prompt. ".repeat(40), cache_control: { type: "ephemeral" } }];
    const a = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 50, system, messages: [{ role: "user", content: "Hi" }] });
    const b = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 50, system, messages: [{ role: "user", content: "Hi again" }] });
    expect(bedrock.requests.at(-1)!.body.system[0].cache_control).toEqual({ type: "ephemeral" });
    expect(a.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(b.usage.cache_read_input_tokens).toBe(a.usage.cache_creation_input_tokens);
  });

  it.each([false, true])("tools, two steps (stream=%s)", async (stream) => {
    const atools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const call = (m: Anthropic.MessageParam[]) => stream
      ? anthropic.messages.stream({ model: "anthropic/claude-sonnet-4.5", max_tokens: 200, messages: m, tools: atools }).finalMessage()
      : anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 200, messages: m, tools: atools });
    const first = await call(messages);
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    expect([use.name, use.input]).toEqual(["get_weather", { city: "Paris" }]);
    messages.push({ role: "assistant", content: first.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "18C" }] });
    const second = await call(messages);
    expect(second.content[0]).toEqual(expect.objectContaining({ type: "text", text: "The weather is sunny." }));
  });

  it("a mid-stream exception frame is the Messages error event the SDK throws", async () => {
    bedrock.failures.push({ kind: "exception", afterEvents: 3, type: "modelStreamErrorException" });
    const err = await anthropic.messages.stream({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage().catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String(err.message)).toContain("modelStreamErrorException");
  });

  it("the openai client reaches the same Claude endpoint through chat -> messages (JSON, and a streamed tool call)", async () => {
    const res = await openai.chat.completions.create({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "Hi" }] });
    expect(res.choices[0]!.message.content).toBe(BEDROCK_TEXT);
    expect(bedrock.requests.at(-1)!.action).toBe("invoke");
    const streamed = await openai.chat.completions.stream({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "Weather?" }], tools }).finalChatCompletion();
    expect(streamed.choices[0]!.finish_reason).toBe("tool_calls");
    expect((streamed.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]).map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([["get_weather", { city: "Paris" }], ["get_time", { city: "Tokyo" }]]);
    expect(bedrock.requests.at(-1)!.action).toBe("invoke-with-response-stream");
    expect(bedrock.requests.at(-1)!.body.anthropic_version).toBe("bedrock-2023-05-31");
  });

  it("a ValidationException is the Anthropic SDK's BadRequestError with Bedrock's message", async () => {
    bedrock.failures.push({ kind: "status", status: 400, type: "ValidationException", message: "messages.0.content: Input should be a valid list" });
    const err = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.message).toContain("ValidationException: messages.0.content: Input should be a valid list");
  });
});

describe("@anthropic-ai/sdk -> Claude on Bedrock through Converse (bedrock_claude_api: converse)", () => {
  it("text, stream and tools are translated messages -> Converse", async () => {
    const msg = await anthropic.messages.create({ model: "test/claude-converse", max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
    expect(validateMessage(msg)).toBe(true);
    expect(msg.content).toEqual([{ type: "text", text: BEDROCK_TEXT, citations: null }]);
    expect(bedrock.requests.at(-1)!.action).toBe("converse");
    expect(bedrock.requests.at(-1)!.body.system).toEqual([{ text: "Be brief." }]);

    const streamed = await anthropic.messages.stream({ model: "test/claude-converse", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    expect(streamed.content).toEqual([expect.objectContaining({ type: "text", text: BEDROCK_TEXT })]);
    expect(streamed.usage.output_tokens).toBeGreaterThan(0);
    expect(bedrock.requests.at(-1)!.action).toBe("converse-stream");

    const atools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
    const t = await anthropic.messages.stream({ model: "test/claude-converse", max_tokens: 200, messages: [{ role: "user", content: "Weather?" }], tools: atools }).finalMessage();
    expect(t.stop_reason).toBe("tool_use");
    expect(t.content.find((b) => b.type === "tool_use")).toEqual(expect.objectContaining({ name: "get_weather", input: { city: "Paris" } }));
  });

  it("reasoning: thinking goes in additionalModelRequestFields and comes back with its signature", async () => {
    const res: any = await openai.chat.completions.create({ model: "test/claude-converse", reasoning_effort: "low", max_tokens: 3000, messages: [{ role: "user", content: "Hi" }] });
    expect(bedrock.requests.at(-1)!.body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 1024 } });
    expect(res.choices[0].message.reasoning_content).toBe("Let me think about this carefully.");
    expect(res.choices[0].message.reasoning_details[0].signature).toMatch(/^sig_/);
  });
});
