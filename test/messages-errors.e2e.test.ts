// Messages errors end to end: the envelope ({type:"error", error:{type, code, message}}), the Anthropic SDK's error
// classes, in-band error events mid-stream, validation naming the field, and a disconnecting client aborting the
// upstream at once.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("msg-err-e2e");
const LIMITED = testKey("msg-err-limited");
const model = "anthropic/claude-sonnet-4.5";
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let gw: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  openai = await startFakeOpenAI({ chunkDelayMs: 10 }); // mid-stream deaths land after the first byte
  gw = await startTestGateway({
    server: { upstream_timeout_ms: 3000 },
    providers: {
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      [model]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } }] },
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] }, limited: { keys: [keyEntry("lim", LIMITED)], allow_models: ["openai/*"] } },
  });
  client = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

const hi = [{ role: "user" as const, content: "Hi" }];

describe("messages errors", () => {
  it("envelope: top-level type error, Anthropic error.type, the gateway code, request-id header", async () => {
    const res = await postJson(`${gw.baseURL}/messages`, { model, messages: hi }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ type: "error", error: expect.objectContaining({ type: "invalid_request_error", code: "INVALID_REQUEST", message: expect.stringContaining("max_tokens") }) });
    expect(res.json.error.details.field).toBe("max_tokens");
    expect(res.headers.get("request-id")).toBeTruthy();
  });

  it("a method or path no route takes under /v1/messages is in the same envelope, so the SDK raises its own class", async () => {
    const cases: [string, string, number, string][] = [
      ["GET", "/messages", 405, "invalid_request_error"],
      ["GET", "/messages/count_tokens", 405, "invalid_request_error"],
      ["POST", "/messages/batches", 404, "not_found_error"],
    ];
    for (const [method, path, status, type] of cases) {
      const res = await fetch(gw.baseURL + path, { method, headers: { "x-api-key": LIVE, "content-type": "application/json" }, body: method === "POST" ? "{}" : undefined });
      expect(res.status, path).toBe(status);
      expect(await res.json(), path).toEqual({ type: "error", error: expect.objectContaining({ type, message: expect.any(String) }) });
      expect(res.headers.get("request-id"), path).toBe(res.headers.get("x-request-id"));
    }
    // The SDK's batches API on a gateway that serves no batches: NotFoundError, as Anthropic's own 404 gives.
    const err = await client.messages.batches.create({ requests: [{ custom_id: "a", params: { model, max_tokens: 10, messages: hi } }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    // Other paths keep the gateway's envelope.
    const chat = await fetch(`${gw.baseURL}/chat/completions`, { method: "GET" });
    expect((await chat.json()).type).toBeUndefined();
  });

  it.each([
    [{ temperature: 1.5 }, "temperature"],
    [{ messages: [{ role: "tool", content: "x" }] }, "messages[0].role"],
    [{ tool_choice: { type: "tool" } }, "tool_choice.name"],
    [{ thinking: { type: "enabled" } }, "thinking.budget_tokens"],
    [{ messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "AA" } }] }] }, "messages[0].content[0].source.media_type"],
  ])("validation names the field (%j)", async (extra, field) => {
    const res = await postJson(`${gw.baseURL}/messages`, { model, max_tokens: 10, messages: hi, ...extra }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe(field);
  });

  it("validation reads like the Messages API's own (what clients key on), on /messages and /messages/count_tokens", async () => {
    const res = await postJson(`${gw.baseURL}/messages`, { model, max_tokens: 10, messages: [...hi, { role: "assistant" }] }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ type: "error", error: { type: "invalid_request_error", code: "INVALID_REQUEST", message: "messages.1.content: Field required", details: expect.objectContaining({ field: "messages[1].content" }) } });
    const count = await postJson(`${gw.baseURL}/messages/count_tokens`, { model }, { "x-api-key": LIVE });
    expect(count.json.error.message).toBe("messages: Field required");
    const err = await client.messages.create({ model, messages: hi } as never).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } });
  });

  it("server tools cannot be translated to a chat upstream: 400 naming the field", async () => {
    const res = await postJson(`${gw.baseURL}/messages`, { model: "openai/gpt-4o-mini", max_tokens: 10, messages: hi, tools: [{ type: "web_search_20250305", name: "web_search" }] }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("tools[0].type");
  });

  it("the Anthropic SDK raises the right classes", async () => {
    const bad = new Anthropic({ apiKey: "mg_live_nope0000000000000", baseURL: gw.url + "/api", maxRetries: 0 });
    await expect(bad.messages.create({ model, max_tokens: 10, messages: hi })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client.messages.create({ model: "nope/nothing", max_tokens: 10, messages: hi })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.messages.create({ model, max_tokens: 10, messages: hi, temperature: 3 } as never)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const limited = new Anthropic({ apiKey: LIMITED, baseURL: gw.url + "/api", maxRetries: 0 });
    await expect(limited.messages.create({ model, max_tokens: 10, messages: hi })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    anthropic.failures.push({ kind: "status", status: 529 }, { kind: "status", status: 529 }); // fallback retries once
    const err = await client.messages.create({ model, max_tokens: 10, messages: hi }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.error.error.code).toBe("UPSTREAM_ERROR");
    expect(err.error.error.type).toBe("api_error");
  });

  it("the provider's request error (prompt too long, from either protocol) is a BadRequestError the SDK does not retry", async () => {
    const retrying = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 2 });
    anthropic.failures.push({ kind: "status", status: 400, type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" });
    const before = anthropic.requests.length;
    const err = await retrying.messages.create({ model, max_tokens: 10, messages: hi }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error).toMatchObject({ type: "invalid_request_error", code: "INVALID_REQUEST" });
    expect(err.error.error.message).toContain("prompt is too long");
    expect(anthropic.requests.length - before).toBe(1);
    // Translated: an OpenAI-protocol upstream's context_length_exceeded reaches the Anthropic client the same way.
    openai.failures.push({ kind: "status", status: 400, body: { error: { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } });
    const translated = await retrying.messages.create({ model: "openai/gpt-4o-mini", max_tokens: 10, messages: hi }).catch((e) => e);
    expect(translated).toBeInstanceOf(Anthropic.BadRequestError);
    expect(translated.error.error.details).toMatchObject({ upstream_status: 400, upstream_error: { code: "context_length_exceeded" } });
  });

  it("a mid-stream upstream error arrives as an `error` event and the SDK throws", async () => {
    anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    const stream = client.messages.stream({ model, max_tokens: 100, messages: hi });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
    // Translated streams too: an OpenAI upstream dying mid-stream.
    openai.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const res = await fetch(`${gw.baseURL}/messages`, { method: "POST", headers: { "x-api-key": LIVE, "content-type": "application/json" }, body: JSON.stringify({ model: "openai/gpt-4o-mini", max_tokens: 100, stream: true, messages: hi }) });
    const text = await res.text();
    expect(text.startsWith("event: message_start\n")).toBe(true);
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
  });

  it("a client that disconnects aborts the upstream stream at once", async () => {
    anthropic.eventDelayMs = 40;
    try {
      const ac = new AbortController();
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", signal: ac.signal, headers: { authorization: `Bearer ${LIVE}`, "content-type": "application/json" }, body: JSON.stringify({ model, stream: true, messages: hi }) });
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await vi.waitFor(() => expect(anthropic.aborted).toBe(1), { timeout: 2000 });
    } finally {
      anthropic.eventDelayMs = 0;
    }
  });
});
