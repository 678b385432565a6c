// Chat completions end to end: the official openai client -> gateway -> fake OpenAI upstream.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateChatCompletion, validateChatCompletionChunk, validateError } from "../core/generated/validators.js";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("chat-e2e");
let fake: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  fake = await startFakeOpenAI();
  gw = await startTestGateway({
    server: { max_body_bytes: 4096, upstream_timeout_ms: 1500 },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: {
      "openai/gpt-4o-mini": {
        type: "language",
        endpoints: [{ provider: "up", model: "gpt-4o-mini-2024-07-18", pricing: { input: "0.00000015", output: "0.0000006" } }],
      },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE), keyEntry("old", testKey("expired"), { expires_at: "2020-01-01T00:00:00Z" }), keyEntry("gone", testKey("revoked"), { revoked: true })] } },
    pipeline: ["auth", "router"],
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const messages = [{ role: "user" as const, content: "Say hello" }];

describe("POST /api/v1/chat/completions with the openai client", () => {
  it("returns the completion with usage and providerMetadata.gateway", async () => {
    const res = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages });
    expect(res.choices[0]!.message.content).toBe("Hello from the fake upstream, streaming word by word.");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    const meta = (res as any).providerMetadata.gateway;
    expect(meta.generationId).toMatch(/^gen_/);
    expect(meta.resolvedProvider).toBe("up");
    expect(meta.modelAttempts).toEqual([expect.objectContaining({ model: "openai/gpt-4o-mini", provider: "up", status: 200 })]);
    expect(validateChatCompletion(res)).toBe(true);
    // The upstream saw its own model id and its own key, never the gateway key.
    const seen = fake.requests.at(-1)!;
    expect(seen.body.model).toBe("gpt-4o-mini-2024-07-18");
    expect(seen.headers.authorization).toBe("Bearer sk-fake-upstream");
    expect(seen.body.providerOptions).toBeUndefined();
  });

  it("streams text: role first, content fragments, finish chunk, no usage unless asked", async () => {
    const stream = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages, stream: true });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.filter((c) => c.choices[0]?.delta?.role).length).toBe(1);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Hello from the fake upstream, streaming word by word.");
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    expect(chunks.some((c) => c.usage)).toBe(false);
    for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
    // The gateway always asks the upstream for usage so it can meter the stream.
    expect(fake.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
  });

  it("honours stream_options.include_usage: a usage chunk with empty choices after the finish chunk", async () => {
    const stream = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages, stream: true, stream_options: { include_usage: true } });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBeGreaterThan(0);
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
  });

  it("streams tool calls whose fragments the SDK assembles into valid JSON", async () => {
    const tools = [
      { type: "function" as const, function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] } } },
      { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } } } } },
    ];
    const runner = client.chat.completions.stream({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Weather and time in Paris and Tokyo?" }], tools });
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(calls.map((c: any) => c.function.name)).toEqual(["get_weather", "get_time"]);
    expect(JSON.parse((calls[0] as any).function.arguments)).toEqual({ city: "Paris", unit: "celsius" });
    expect(JSON.parse((calls[1] as any).function.arguments)).toEqual({ city: "Tokyo", unit: "celsius" });
  });

  it("echoes X-Request-Id, or generates one, on success and on errors", async () => {
    const ok = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages }, { authorization: `Bearer ${LIVE}`, "x-request-id": "trace-123" });
    expect(ok.headers.get("x-request-id")).toBe("trace-123");
    const bad = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages }, {});
    expect(bad.status).toBe(401);
    expect(bad.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe("errors through the openai client", () => {
  it("classifies authentication failures (missing, malformed, unknown, revoked, expired)", async () => {
    const cases: [string, string][] = [
      ["", "INVALID_API_KEY"],
      ["sk-not-ours", "INVALID_API_KEY"],
      [testKey("nobody"), "INVALID_API_KEY"],
      [testKey("revoked"), "INVALID_API_KEY"],
      [testKey("expired"), "EXPIRED_API_KEY"],
    ];
    for (const [key, code] of cases) {
      const c = new OpenAI({ apiKey: key || "x", baseURL: gw.baseURL, maxRetries: 0, defaultHeaders: key ? {} : { authorization: null as never } });
      const err = await c.chat.completions.create({ model: "openai/gpt-4o-mini", messages }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(err.status).toBe(401);
      expect(err.error.code).toBe(code);
    }
  });

  it("unknown model: 404 NotFoundError with MODEL_NOT_FOUND", async () => {
    const err = await client.chat.completions.create({ model: "openai/nope", messages }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error.code).toBe("MODEL_NOT_FOUND");
    expect(err.requestID).toMatch(/^req_/);
  });

  it("invalid body: 400 BadRequestError naming the field", async () => {
    const err = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages, temperature: 3 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error.code).toBe("INVALID_REQUEST");
    expect(err.error.details.field).toBe("temperature");
    expect(err.message).toContain("temperature");
    expect(validateError(err.error ? { error: err.error } : {})).toBe(true);
  });

  it("upstream 500: 502 UPSTREAM_ERROR with the provider's message in details", async () => {
    fake.failures.push({ kind: "status", status: 500, body: { error: { message: "The server had an error", type: "server_error", param: null, code: null } } });
    const err = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.error.code).toBe("UPSTREAM_ERROR");
    expect(err.error.details.upstream_error.message).toBe("The server had an error");
  });

  it("upstream request error: 400 BadRequestError with the provider's message, never retried", async () => {
    fake.failures.push({ kind: "status", status: 400, body: { error: { message: "Unsupported parameter: 'foo'", type: "invalid_request_error", param: "foo", code: "unsupported_parameter" } } });
    const retrying = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 2 });
    const before = fake.requests.length;
    const err = await retrying.chat.completions.create({ model: "openai/gpt-4o-mini", messages }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error.code).toBe("INVALID_REQUEST");
    expect(err.error.message).toContain("Unsupported parameter: 'foo'");
    expect(err.error.details).toMatchObject({ provider: "up", upstream_status: 400, field: "foo", upstream_error: { code: "unsupported_parameter" } });
    expect(err.headers.get("x-should-retry")).toBe("false");
    expect(fake.requests.length - before).toBe(1);
  });

  it("upstream that never answers: 504 UPSTREAM_TIMEOUT", async () => {
    fake.failures.push({ kind: "hang" });
    const err = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages }).catch((e) => e);
    expect(err.status).toBe(504);
    expect(err.error.code).toBe("UPSTREAM_TIMEOUT");
  });

  it("a stream that dies mid-way ends with an error event the SDK raises", async () => {
    fake.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const stream = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages, stream: true });
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta?.content ?? "");
    })().catch((e) => e);
    expect(got.join("")).toBe("Hello from");
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toMatch(/upstream|before \[DONE\]|provider/i);
  });
});

describe("client disconnects", () => {
  it("aborts the upstream request at once when the client goes away mid-stream", async () => {
    fake.failures.push({ kind: "slow", chunkDelayMs: 200 });
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      signal: controller.signal,
      headers: { authorization: `Bearer ${LIVE}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openai/gpt-4o-mini", stream: true, messages }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const upstream = fake.requests.at(-1)!;
    const t0 = Date.now();
    controller.abort();
    for (let i = 0; i < 40 && !upstream.abortedAt; i++) await new Promise((r) => setTimeout(r, 25));
    expect(upstream.abortedAt).toBeDefined();
    // Well before the slow upstream would have finished its ~12 chunks at 200 ms each.
    expect(upstream.abortedAt! - t0).toBeLessThan(1000);
    // The gateway is still healthy.
    const ok = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages });
    expect(ok.choices[0]!.finish_reason).toBe("stop");
  });
});

describe("HTTP edge cases", () => {
  const auth = { authorization: `Bearer ${LIVE}` };
  it("413 for bodies over the configured limit", async () => {
    const big = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x".repeat(10_000) }] };
    const r = await postJson(`${gw.baseURL}/chat/completions`, big, auth);
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe("PAYLOAD_TOO_LARGE");
  });
  it("400 for invalid JSON and for a wrong content type", async () => {
    const bad = await postJson(`${gw.baseURL}/chat/completions`, "{not json", auth);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("INVALID_REQUEST");
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "hi" });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain("Content-Type");
  });
  it("unknown routes get the envelope with 404; a wrong method 405", async () => {
    const r = await fetch(`${gw.url}/api/v1/nothing-here`);
    expect(r.status).toBe(404);
    expect((await r.json()).error.code).toBe("NOT_FOUND");
    const m = await fetch(`${gw.baseURL}/chat/completions`);
    expect(m.status).toBe(405);
  });
  it("unknown request fields pass through to a native upstream", async () => {
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages, store: false, service_tier: "auto", metadata: { a: "b" } }, auth);
    const seen = fake.requests.at(-1)!.body;
    expect(seen).toMatchObject({ store: false, service_tier: "auto", metadata: { a: "b" } });
  });
});
