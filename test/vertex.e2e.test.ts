// Vertex AI end to end: Gemini and Claude on Vertex through the official openai and @anthropic-ai/sdk clients,
// against the fake Vertex host (bearer tokens checked, URL shape checked, Vertex's Claude body checked) and the fake
// token endpoint (the service account's JWT verified). Full default pipeline on SQLite; the key file is relative to
// the config file. Fallback to first-party providers on RESOURCE_EXHAUSTED; token refresh on expiry and on 401.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint, type ServiceAccountKey } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { approxTokens, fakeVector } from "./upstreams/http-fake.ts";
import { validateChatCompletion, validateChatCompletionChunk, validateMessage } from "../core/generated/validators.js";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("vertex-e2e");
const BYOK = testKey("vertex-byok");
let byokToken: string;
let directToken: string;
const GEMINI = "google/gemini-2.5-flash";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const CLAUDE_ON_VERTEX = "claude-sonnet-4-5@20250929";
const EMBED = "google/gemini-embedding-001";
let tokens: FakeTokenEndpoint;
let sa: ServiceAccountKey;
let vertex: FakeVertex;
let firstParty: FakeAnthropic;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  tokens = await startFakeTokenEndpoint();
  sa = makeServiceAccount(tokens.tokenUri, { projectId: "fake-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "fake-project", location: "us-east5" });
  byokToken = tokens.issue();
  directToken = tokens.issue();
  firstParty = await startFakeAnthropic();
  const price = { input: "0.000003", output: "0.000015" };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      // No project_id: it comes from the key file; the key file is relative to gateway.yaml.
      vertex: { protocol: "vertex", base_url: vertex.baseUrl, region: "us-east5", credentials_file: "sa.json" },
      anthropic: { protocol: "anthropic", base_url: firstParty.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      // An access token given directly: no key file, so the project must be named.
      "vertex-token": { protocol: "vertex", base_url: vertex.baseUrl, region: "us-east5", project_id: "fake-project", api_key: directToken },
    },
    models: {
      [GEMINI]: { type: "language", endpoints: [{ provider: "vertex", model: "gemini-2.5-flash", pricing: price }] },
      "google/gemini-2.5-flash-direct": { type: "language", endpoints: [{ provider: "vertex-token", model: "gemini-2.5-flash", pricing: price }] },
      [EMBED]: { type: "embedding", dimensions: 3072, endpoints: [{ provider: "vertex", model: "gemini-embedding-001", pricing: { input: "0.00000015" } }] },
      [CLAUDE]: { type: "language", endpoints: [{ provider: "vertex", model: CLAUDE_ON_VERTEX, pricing: price }, { provider: "anthropic", model: "claude-sonnet-4-5", pricing: price }] },
    },
    projects: {
      acme: { keys: [keyEntry("ci", LIVE)] },
      // Bring your own key: the project's own access token replaces the service account's.
      byok: { keys: [keyEntry("byok", BYOK)], providers: { vertex: { api_key: byokToken } } },
    },
  }, { files: { "sa.json": readFileSync(sa.file, "utf8") } });
  openai = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
  anthropic = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await vertex?.close();
  await firstParty?.close();
  await tokens?.close();
});

const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const drain = async (s: AsyncIterable<unknown>) => {
  for await (const _ of s) { /* drain */ }
};
const lastVertex = () => vertex.requests.at(-1)!;

describe("openai client -> Gemini on Vertex", () => {
  it("text: generateContent on the regional publisher path with a bearer token from the service account", async () => {
    const res = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }] });
    expect(validateChatCompletion(res)).toBe(true);
    expect(res.choices[0]!.message.content).toBe("Hello from the fake Gemini upstream.");
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    const seen = lastVertex();
    expect(seen.path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent");
    expect(tokens.valid(String(seen.headers.authorization).slice(7))).toBe(true);
    expect(seen.body.contents).toEqual([{ role: "user", parts: [{ text: "Hi" }] }]);
  });

  it("stream: usage from the last chunk (earlier chunks carry only trafficType)", async () => {
    const stream = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello from the fake Gemini upstream.");
    const usage = chunks.filter((c) => c.usage);
    expect(usage.length).toBe(1);
    expect(usage[0]!.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(usage[0]!.usage!.completion_tokens).toBeGreaterThan(0);
    expect(lastVertex().path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  it("tools: function calls come back as tool_calls", async () => {
    const res = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Weather?" }], tools: [weather] });
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(res.choices[0]!.message.tool_calls!.map((c: any) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([["get_weather", { city: "Paris", unit: "celsius" }]]);
    expect(lastVertex().body.tools[0].functionDeclarations[0].name).toBe("get_weather");
  });

  it("a stream cut mid-way is an error the client raises", async () => {
    vertex.gemini.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    vertex.gemini.chunkDelayMs = 20;
    try {
      const stream = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }], stream: true });
      await expect(drain(stream)).rejects.toBeInstanceOf(OpenAI.APIError);
    } finally {
      vertex.gemini.chunkDelayMs = 0;
    }
  });

  it("INVALID_ARGUMENT is the client's 400 with Google's message; PERMISSION_DENIED a non-retryable 502", async () => {
    vertex.failures.push({ status: 400, message: "Unable to submit request because it has an empty text parameter." });
    const bad = await postJson(`${gw.baseURL}/chat/completions`, { model: GEMINI, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("INVALID_REQUEST");
    expect(bad.json.error.message).toContain("empty text parameter");
    vertex.failures.push({ status: 403, message: "Permission 'aiplatform.endpoints.predict' denied" });
    const denied = await postJson(`${gw.baseURL}/chat/completions`, { model: GEMINI, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(denied.status).toBe(502);
    expect(denied.headers.get("x-should-retry")).toBe("false");
    expect(denied.json.error.details.upstream_error.status).toBe("PERMISSION_DENIED");
    // UNAVAILABLE is retryable: the only endpoint is tried once more, and answers.
    vertex.failures.push({ status: 503, message: "The service is currently unavailable." });
    const retried = await postJson(`${gw.baseURL}/chat/completions`, { model: GEMINI, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(retried.status).toBe(200);
    expect(retried.json.providerMetadata.gateway.modelAttempts.map((a: any) => a.status)).toEqual([502, 200]);
  });
});

describe("openai client -> Claude on Vertex", () => {
  it("text: rawPredict with anthropic_version vertex-2023-10-16 and no model in the body", async () => {
    const res = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] });
    expect(validateChatCompletion(res)).toBe(true);
    expect(res.choices[0]!.message.content).toBe("Hello from the fake Anthropic upstream.");
    expect((res as any).providerMetadata.gateway.resolvedProvider).toBe("vertex");
    const seen = lastVertex();
    expect(seen.path).toBe(`/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/${CLAUDE_ON_VERTEX}:rawPredict`);
    expect(seen.body.anthropic_version).toBe("vertex-2023-10-16");
    expect(seen.body).not.toHaveProperty("model");
    expect(seen.body.system).toEqual([{ type: "text", text: "Be brief." }]);
    expect(seen.headers).not.toHaveProperty("anthropic-version");
  });

  it("stream with tools: streamRawPredict, tool call arguments streamed, usage at the end", async () => {
    const stream = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "Weather?" }], tools: [weather], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const args = calls.map((c) => c.function?.arguments ?? "").join("");
    expect(calls[0]!.function!.name).toBe("get_weather");
    expect(JSON.parse(args)).toEqual(expect.objectContaining({ city: "Paris" }));
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)!.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(lastVertex().path).toMatch(/:streamRawPredict$/);
    expect(lastVertex().body.stream).toBe(true);
  });

  it("an in-band error event mid-stream is an error the client raises", async () => {
    vertex.anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    const stream = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "Hi" }], stream: true });
    await expect(drain(stream)).rejects.toBeInstanceOf(OpenAI.APIError);
  });

  it("RESOURCE_EXHAUSTED falls back to first-party Anthropic", async () => {
    const before = firstParty.requests.length;
    vertex.failures.push({ status: 429, publisher: "anthropic" });
    const res: any = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "Hi" }] });
    expect(res.choices[0].message.content).toBe("Hello from the fake Anthropic upstream.");
    const attempts = res.providerMetadata.gateway.modelAttempts;
    expect(attempts.map((a: any) => [a.provider, a.status])).toEqual([["vertex", 502], ["anthropic", 200]]);
    expect(firstParty.requests.length).toBe(before + 1);
    expect(firstParty.requests.at(-1)!.body.model).toBe("claude-sonnet-4-5");
  });
});

describe("Anthropic SDK -> Claude on Vertex (native)", () => {
  it("text and stream; anthropic-beta is forwarded as a header", async () => {
    const msg = await anthropic.messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }, { headers: { "anthropic-beta": "fake-beta-2025-01-01" } });
    expect(validateMessage(msg)).toBe(true);
    expect(msg.content).toEqual([{ type: "text", text: "Hello from the fake Anthropic upstream.", citations: null }]);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(lastVertex().headers["anthropic-beta"]).toBe("fake-beta-2025-01-01");
    expect(lastVertex().body).toEqual({ anthropic_version: "vertex-2023-10-16", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });

    const events: string[] = [];
    const stream = anthropic.messages.stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    stream.on("streamEvent", (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content[0]).toEqual(expect.objectContaining({ type: "text", text: "Hello from the fake Anthropic upstream." }));
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(lastVertex().path).toMatch(/publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:streamRawPredict$/);
  });

  it.each([false, true])("two-step tool loop (stream=%s)", async (streamed) => {
    const tools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const call = (m: Anthropic.MessageParam[]) => streamed
      ? anthropic.messages.stream({ model: CLAUDE, max_tokens: 200, messages: m, tools }).finalMessage()
      : anthropic.messages.create({ model: CLAUDE, max_tokens: 200, messages: m, tools });
    const first = await call(messages);
    expect(first.stop_reason).toBe("tool_use");
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    expect(uses.map((u) => [u.name, u.input])).toEqual([["get_weather", expect.objectContaining({ city: "Paris" })]]);
    messages.push({ role: "assistant", content: first.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: "user", content: uses.map((u) => ({ type: "tool_result" as const, tool_use_id: u.id, content: "18°C" })) });
    const second = await call(messages);
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]).toEqual(expect.objectContaining({ type: "text", text: "The weather is sunny." }));
  });

  it("Anthropic-shaped 400 from the model reaches the client as invalid_request_error", async () => {
    // A tool_result answering no tool_use is refused by the model behind rawPredict, in Anthropic's own error shape.
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_nowhere", content: "18°C" }] }];
    const err = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.message).toContain("unexpected `tool_use_id` found in `tool_result` blocks: toolu_nowhere");
    expect(lastVertex().path).toMatch(/:rawPredict$/);
  });
});

describe("count_tokens", () => {
  it("Claude: count-tokens:rawPredict with the model in the body; Gemini: the model's countTokens", async () => {
    const body = { system: "Be brief.", messages: [{ role: "user" as const, content: "How many tokens is this?" }], tools: [{ name: "get_weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }] };
    const claude = await anthropic.messages.countTokens({ model: CLAUDE, ...body });
    expect(claude.input_tokens).toBeGreaterThan(0);
    const seen = lastVertex();
    expect(seen.path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict");
    expect(seen.body).toEqual(expect.objectContaining({ model: CLAUDE_ON_VERTEX, anthropic_version: "vertex-2023-10-16", system: "Be brief." }));
    const gemini = await anthropic.messages.countTokens({ model: GEMINI, ...body });
    expect(lastVertex().path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:countTokens");
    expect(lastVertex().body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
    // System and tools are counted too: more than the turns alone.
    const turnsOnly = await anthropic.messages.countTokens({ model: GEMINI, messages: body.messages });
    expect(gemini.input_tokens).toBeGreaterThan(turnsOnly.input_tokens);
  });
});

describe("embeddings", () => {
  it(":predict one instance per request for gemini-embedding-001, vectors in order, usage from the token counts", async () => {
    const seen = vertex.requests.length;
    const input = ["alpha", "beta gamma", "delta epsilon zeta"];
    const res = await openai.embeddings.create({ model: EMBED, input, dimensions: 8, encoding_format: "float", providerOptions: { vertex: { taskType: "RETRIEVAL_DOCUMENT" } } } as never);
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    res.data.forEach((d, i) => expect(d.embedding).toEqual(fakeVector(input[i]!, 8, "RETRIEVAL_DOCUMENT")));
    expect(res.usage.prompt_tokens).toBe(input.reduce((n, t) => n + approxTokens(t), 0));
    const calls = vertex.requests.slice(seen);
    expect(calls.map((r) => r.path)).toEqual(Array(3).fill("/v1/projects/fake-project/locations/us-east5/publishers/google/models/gemini-embedding-001:predict"));
    expect(calls.map((r) => r.body.instances)).toEqual(input.map((content) => [{ content, task_type: "RETRIEVAL_DOCUMENT" }]));
    expect(calls[0]!.body.parameters).toEqual({ outputDimensionality: 8 });
  });
});

describe("openai client, Responses API -> Vertex", () => {
  it.each([[GEMINI, /:generateContent$/], [CLAUDE, /:rawPredict$/]] as const)("%s: text, translated", async (model, path) => {
    const res = await openai.responses.create({ model, input: "Hi", instructions: "Be brief." });
    expect(res.output_text).toMatch(/^Hello from the fake (Gemini|Anthropic) upstream\.$/);
    expect(lastVertex().path).toMatch(path);
  });

  it("stream with a function tool on Claude", async () => {
    const stream = await openai.responses.create({ model: CLAUDE, input: "Weather?", stream: true, tools: [{ type: "function", name: "get_weather", parameters: weather.function.parameters, strict: false }] });
    const types: string[] = [];
    let done: any;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.completed") done = e.response;
    }
    expect(types[0]).toBe("response.created");
    const call = done.output.find((o: any) => o.type === "function_call");
    expect(call.name).toBe("get_weather");
    expect(JSON.parse(call.arguments)).toEqual(expect.objectContaining({ city: "Paris" }));
    expect(lastVertex().path).toMatch(/:streamRawPredict$/);
  });
});

describe("other credentials", () => {
  it("api_key is an access token sent as is; a project's own token (BYOK) replaces the service account's", async () => {
    const before = tokens.exchanges;
    const direct = await openai.chat.completions.create({ model: "google/gemini-2.5-flash-direct", messages: [{ role: "user", content: "Hi" }] });
    expect(direct.choices[0]!.message.content).toBe("Hello from the fake Gemini upstream.");
    expect(lastVertex().headers.authorization).toBe(`Bearer ${directToken}`);
    const byok = new OpenAI({ apiKey: BYOK, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
    await byok.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }] });
    expect(lastVertex().headers.authorization).toBe(`Bearer ${byokToken}`);
    expect(tokens.exchanges).toBe(before);
  });
});

describe("Anthropic SDK mid-stream", () => {
  it("an overloaded_error event after the stream started reaches the SDK as an error", async () => {
    vertex.anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    const stream = anthropic.messages.stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    const err = await stream.finalMessage().catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String(err.message)).toMatch(/overloaded|Overloaded/);
  });
});

describe("thinking knobs", () => {
  it("providerOptions.vertex knobs apply to the target's family and are not reported as dropped", async () => {
    const claude = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, max_tokens: 3000, messages: [{ role: "user", content: "Hi" }], providerOptions: { vertex: { thinkingBudget: 0.03 } } }, { authorization: `Bearer ${LIVE}` });
    expect(claude.status).toBe(200);
    expect(lastVertex().body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(claude.headers.get("x-mg-dropped-params")).toBeNull();
    const gemini = await postJson(`${gw.baseURL}/chat/completions`, { model: GEMINI, messages: [{ role: "user", content: "Hi" }], providerOptions: { vertex: { reasoningSummary: "auto" } } }, { authorization: `Bearer ${LIVE}` });
    expect(gemini.status).toBe(200);
    expect(lastVertex().body.generationConfig.thinkingConfig.includeThoughts).toBe(true);
    expect(gemini.headers.get("x-mg-dropped-params")).toBeNull();
    // Claude takes no reasoningSummary: that one is dropped and named.
    const named = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "Hi" }], providerOptions: { vertex: { reasoningSummary: "auto" } } }, { authorization: `Bearer ${LIVE}` });
    expect(named.headers.get("x-mg-dropped-params")).toBe("providerOptions.vertex.reasoningSummary");
  });
});

describe("access tokens", () => {
  it("one exchange serves many requests; a token that expires between requests is replaced", async () => {
    const before = tokens.exchanges;
    await Promise.all([1, 2, 3].map(() => openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }] })));
    expect(tokens.exchanges).toBe(before); // the cached token is still good
    const used = String(lastVertex().headers.authorization);
    const seen = vertex.requests.length;
    // Only Date moves: the gateway's cache, its JWT's iat/exp and the fakes' expiry checks all see an hour later.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 3600_000);
      expect(tokens.valid(used.slice(7))).toBe(false);
      const res = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }] });
      expect(res.choices[0]!.message.content).toBe("Hello from the fake Gemini upstream.");
      expect(tokens.exchanges).toBe(before + 1);
      expect(vertex.requests.length).toBe(seen + 1); // refreshed before use: no 401 round trip
      expect(String(lastVertex().headers.authorization)).not.toBe(used);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a token revoked upstream (401) is exchanged again once and the request retried", async () => {
    const before = tokens.exchanges;
    const seen = vertex.requests.length;
    tokens.revokeAll();
    const msg = await anthropic.messages.create({ model: CLAUDE, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
    expect(msg.content[0]).toEqual(expect.objectContaining({ text: "Hello from the fake Anthropic upstream." }));
    expect(tokens.exchanges).toBe(before + 1);
    expect(vertex.requests.length).toBe(seen + 2); // the 401, then the retry
  });

  it("a refused exchange is a clear 502 naming the token endpoint, and the next request recovers", async () => {
    tokens.revokeAll();
    tokens.failures.push({ status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: GEMINI, messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${LIVE}` });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toContain(tokens.tokenUri);
    expect(r.json.error.message).toContain("invalid_grant: Invalid JWT Signature.");
    const ok = await openai.chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "Hi" }] });
    expect(ok.choices[0]!.message.content).toBe("Hello from the fake Gemini upstream.");
  });
});
