// /api/openapi.json held to the gateway's real answers (the shipped config, sandbox keys on the simulator): each
// answer below must be one the document describes — its status, its body or every event of its stream against the
// schema named there, and the headers a client relies on (request id, rate limits, Retry-After, generation id and
// cost, the MCP session) documented where they are sent. And what a request may send: the MCP body, ?alt=sse,
// Gemini's pageSize, the idempotency and trace headers, as the gateway takes or refuses them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { ulid } from "ulid";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY, SHIPPED_PROJECT } from "./helpers/shipped-config.ts";
import { OpenApiContract } from "./helpers/openapi-contract.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SANDBOX = testKey("oa-sandbox", true);
const LIMITED = testKey("oa-limited", true);
const GUARDED = testKey("oa-guarded");
const LIVE = SHIPPED_KEY;

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let contract: OpenApiContract;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].keys.push(keyEntry("oa-sandbox", SANDBOX));
  config.projects.limited = { keys: [keyEntry("oa-limited", LIMITED)], rate_limits: { rpm: 1 } };
  // A moderation endpoint nothing listens on: the guarded project's requests are 503 GUARDRAIL_UNAVAILABLE.
  config.providers.down = { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-down" };
  config.projects.guarded = { keys: [keyEntry("oa-guarded", GUARDED)], guardrails: { moderation: { provider: "down", on: ["input"], on_error: "fail_closed" } } };
  gw = await startTestGateway(config, { env: providerEnv(config) });
  contract = new OpenApiContract(await (await fetch(`${gw.url}/api/openapi.json`)).json());
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

interface Asked { status: number; headers: Headers; text: string; problems: string[] }

/** One request, and what the document does not say about its answer. `path` is under /api. */
async function ask(method: string, template: string, path: string, init: { key?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Asked> {
  const headers: Record<string, string> = { ...(init.key ? { authorization: `Bearer ${init.key}` } : {}), ...init.headers };
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${gw.url}/api${path}`, { method, headers, body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body) });
  const answer = { status: res.status, headers: res.headers, text: await res.text() };
  return { ...answer, problems: contract.problems(method, template, answer).map((p) => `${method} ${path} -> ${res.status}: ${p}`) };
}

/** Every answer had the status the case is about, and none strays from the document. */
function expectDocumented(asked: [Asked, number][]): void {
  expect(asked.map(([a]) => a.status)).toEqual(asked.map(([, status]) => status));
  expect(asked.flatMap(([a]) => a.problems)).toEqual([]);
}

const hello = [{ role: "user", content: "Hello" }];
const gemini = { contents: [{ role: "user", parts: [{ text: "Hello" }] }] };
const weatherTool = { name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } };
const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "openapi-contract", version: "1" } } };
const MCP_ACCEPT = { accept: "application/json, text/event-stream" };

describe("/api/openapi.json against the gateway's answers", () => {
  it("Gemini routes: every error is documented in Google's shape ({error: {code, status, details}}), as it is sent", async () => {
    const goog = (key: string) => ({ "x-goog-api-key": key });
    const gen = "/v1beta/models/{model}:generateContent";
    await ask("POST", gen, "/v1beta/models/openai/gpt-4o-mini:generateContent", { headers: goog(LIMITED), body: gemini });
    expectDocumented([
      [await ask("POST", gen, "/v1beta/models/openai/gpt-4o-mini:generateContent", { headers: goog("mg_test_nope"), body: gemini }), 401],
      [await ask("POST", gen, "/v1beta/models/openai/nope-9:generateContent", { headers: goog(SANDBOX), body: gemini }), 404],
      [await ask("POST", gen, "/v1beta/models/openai/gpt-4o-mini:generateContent", { headers: goog(SANDBOX), body: { contents: "x" } }), 400],
      [await ask("POST", gen, "/v1beta/models/openai/gpt-4o-mini:generateContent", { headers: goog(LIMITED), body: gemini }), 429],
      [await ask("POST", "/v1beta/models/{model}:countTokens", "/v1beta/models/openai/nope-9:countTokens", { headers: goog(SANDBOX), body: gemini }), 404],
      [await ask("GET", "/v1beta/models/{model}", "/v1beta/models/nobody/nothing", { headers: goog(SANDBOX) }), 404],
    ]);
  });

  it("every route's success is described: Messages and Responses events, Gemini countTokens, embeddings and models, MCP, this document", async () => {
    const goog = { "x-goog-api-key": SANDBOX };
    const messages = { model: "anthropic/claude-sonnet-4.5", max_tokens: 64, messages: hello };
    const mcp = await ask("POST", "/mcp", "/mcp", { key: LIVE, headers: MCP_ACCEPT, body: initialize });
    const session = { ...MCP_ACCEPT, "mcp-session-id": mcp.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": "2025-06-18" };
    expectDocumented([
      [await ask("POST", "/v1/messages", "/v1/messages", { key: SANDBOX, body: messages }), 200],
      [await ask("POST", "/v1/messages", "/v1/messages", { key: SANDBOX, body: { ...messages, stream: true } }), 200],
      [await ask("POST", "/v1/messages", "/v1/messages", { key: SANDBOX, body: { ...messages, stream: true, tools: [weatherTool], tool_choice: { type: "any" } } }), 200],
      [await ask("POST", "/v1/responses", "/v1/responses", { key: SANDBOX, body: { model: "openai/gpt-4o-mini", input: "Hello" } }), 200],
      [await ask("POST", "/v1/responses", "/v1/responses", { key: SANDBOX, body: { model: "openai/gpt-4o-mini", input: "Hello", stream: true } }), 200],
      [await ask("POST", "/v1beta/models/{model}:countTokens", "/v1beta/models/google/gemini-2.5-flash:countTokens", { headers: goog, body: gemini }), 200],
      [await ask("POST", "/v1beta/{creator}/{slug}:countTokens", "/v1beta/openai/gpt-4o-mini:countTokens", { headers: goog, body: gemini }), 200],
      [await ask("POST", "/v1beta/models/{model}:embedContent", "/v1beta/models/google/gemini-embedding-001:embedContent", { headers: goog, body: { content: { parts: [{ text: "hi" }] } } }), 200],
      [await ask("POST", "/v1beta/models/{model}:batchEmbedContents", "/v1beta/models/google/gemini-embedding-001:batchEmbedContents", { headers: goog, body: { requests: [{ content: { parts: [{ text: "a" }] } }, { content: { parts: [{ text: "b" }] } }] } }), 200],
      [await ask("GET", "/v1beta/models", "/v1beta/models?pageSize=3", { headers: goog }), 200],
      [await ask("GET", "/v1beta/models/{model}", "/v1beta/models/gemini-2.5-flash", { headers: goog }), 200],
      [await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: SANDBOX, body: { model: "openai/gpt-4o-mini", messages: hello, stream: true } }), 200],
      [mcp, 200],
      [await ask("POST", "/mcp", "/mcp", { key: LIVE, headers: session, body: { jsonrpc: "2.0", method: "notifications/initialized" } }), 202],
      [await ask("POST", "/mcp", "/mcp", { key: LIVE, headers: session, body: { jsonrpc: "2.0", id: 2, method: "tools/list" } }), 200],
      [await ask("DELETE", "/mcp", "/mcp", { key: LIVE, headers: session }), 200],
      [await ask("GET", "/openapi.json", "/openapi.json"), 200],
    ]);
    // What an MCP client sends is a body the document describes (a generated client may send it).
    expect(contract.requestBodyProblem("POST", "/mcp", initialize)).toBeUndefined();
    expect(contract.requestBodyProblem("POST", "/v1/mcp", [{ jsonrpc: "2.0", id: 3, method: "tools/list" }, { jsonrpc: "2.0", method: "notifications/initialized" }])).toBeUndefined();
  });

  it("MCP routes: their refusals are documented as the JSON-RPC errors they are (the key and the body before them as the envelope)", async () => {
    expectDocumented([
      [await ask("POST", "/mcp", "/mcp", { key: SANDBOX, headers: MCP_ACCEPT, body: initialize }), 403],
      [await ask("GET", "/mcp", "/mcp", { key: SANDBOX, headers: { accept: "text/event-stream" } }), 403],
      [await ask("DELETE", "/v1/mcp", "/v1/mcp", { key: SANDBOX }), 403],
      [await ask("POST", "/mcp", "/mcp", { key: LIVE, headers: MCP_ACCEPT, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }), 400],
      [await ask("POST", "/v1/mcp", "/v1/mcp", { key: LIVE, headers: { ...MCP_ACCEPT, "mcp-session-id": "no-such-session" }, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }), 404],
      [await ask("POST", "/mcp", "/mcp", { key: LIVE, body: initialize }), 406],
      [await ask("POST", "/mcp", "/mcp", { headers: MCP_ACCEPT, body: initialize }), 401],
      [await ask("POST", "/mcp", "/mcp", { key: LIVE, headers: MCP_ACCEPT, body: "{not json" }), 400],
    ]);
  });

  it("a 503 (a guardrail that could not check the request) is documented on the routes that send it, with Retry-After", async () => {
    const asked = [
      await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: GUARDED, body: { model: "openai/gpt-4o-mini", messages: hello } }),
      await ask("POST", "/v1/messages", "/v1/messages", { key: GUARDED, body: { model: "openai/gpt-4o-mini", max_tokens: 16, messages: hello } }),
      await ask("POST", "/v1beta/models/{model}:generateContent", "/v1beta/models/openai/gpt-4o-mini:generateContent", { headers: { "x-goog-api-key": GUARDED }, body: gemini }),
    ];
    expectDocumented(asked.map((a) => [a, 503]));
    for (const a of asked) expect(a.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it(":streamGenerateContent needs ?alt=sse, and the document says so", async () => {
    const goog = { "x-goog-api-key": SANDBOX };
    for (const template of ["/v1beta/models/{model}:streamGenerateContent", "/v1beta/{creator}/{slug}:streamGenerateContent"]) {
      const alt = contract.operation("POST", template).parameters.find((p: any) => p.in === "query" && p.name === "alt");
      expect(alt, template).toMatchObject({ required: true, schema: { const: "sse" } });
    }
    expectDocumented([
      [await ask("POST", "/v1beta/models/{model}:streamGenerateContent", "/v1beta/models/openai/gpt-4o-mini:streamGenerateContent", { headers: goog, body: gemini }), 400],
      [await ask("POST", "/v1beta/models/{model}:streamGenerateContent", "/v1beta/models/openai/gpt-4o-mini:streamGenerateContent?alt=sse", { headers: goog, body: gemini }), 200],
    ]);
  });

  it("the headers clients read are documented where they are sent: request id, rate limits, Retry-After, generation and cost, trace id", async () => {
    const chat = { model: "openai/gpt-4o-mini", messages: hello };
    const traced = { key: SANDBOX, headers: { "x-mg-trace-id": "trace-123" } };
    await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: LIMITED, body: chat });
    const asked: [Asked, number][] = [
      [await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: SANDBOX, body: chat }), 200],
      [await ask("POST", "/v1/embeddings", "/v1/embeddings", { ...traced, body: { model: "openai/text-embedding-3-small", input: "a cat" } }), 200],
      [await ask("POST", "/v1/rerank", "/v1/rerank", { ...traced, body: { model: "cohere/rerank-v3.5", query: "capital of France", documents: ["Berlin", "Paris"] } }), 200],
      [await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: LIMITED, body: chat }), 429],
      [await ask("POST", "/v1/messages", "/v1/messages", { key: LIMITED, body: { ...chat, max_tokens: 8 } }), 429],
      [await ask("GET", "/v1/models", "/v1/models", { key: SANDBOX }), 200],
    ];
    expectDocumented(asked);
    // The case is about these headers: they were sent.
    const [chatOk, embeddings, , limited] = asked.map(([a]) => a.headers);
    expect([chatOk!.get("x-mg-generation-id"), chatOk!.get("x-mg-cost-usd"), chatOk!.get("x-ratelimit-remaining-requests")]).not.toContain(null);
    expect([limited!.get("retry-after"), limited!.get("retry-after-ms")]).not.toContain(null);
    expect(embeddings!.get("x-mg-trace-id")).toBe("trace-123");
    for (const path of ["/v1/videos", "/v1/rerank", "/v1/images/generations", "/v1/embeddings"]) {
      expect(contract.parameterProblem("POST", path, "header", "x-mg-trace-id", "trace-123"), path).toBeUndefined();
    }
  });

  it("what Anthropic clients read is documented: the catalog in Anthropic's shape with x-api-key, request-id on Messages answers, x-should-retry on a key no retry passes", async () => {
    const anthropicClient = { "x-api-key": SANDBOX, "anthropic-version": "2023-06-01" };
    const messages = { model: "anthropic/claude-sonnet-4.5", max_tokens: 16, messages: hello };
    const asked: [Asked, number][] = [
      [await ask("GET", "/v1/models", "/v1/models?limit=2", { headers: anthropicClient }), 200],
      [await ask("GET", "/v1/models/{id}", "/v1/models/anthropic%2Fclaude-sonnet-4.5", { headers: anthropicClient }), 200],
      [await ask("POST", "/v1/messages", "/v1/messages", { key: SANDBOX, body: messages }), 200],
      [await ask("POST", "/v1/messages/count_tokens", "/v1/messages/count_tokens", { key: SANDBOX, body: { model: messages.model, messages: hello } }), 200],
      [await ask("POST", "/v1/messages", "/v1/messages", { headers: { "x-api-key": "mg_test_nope" }, body: messages }), 401],
      [await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: "mg_test_nope", body: { model: "openai/gpt-4o-mini", messages: hello } }), 401],
    ];
    expectDocumented(asked);
    // The case is about these: sent, in Anthropic's shape.
    const [list, , ok, count, refused, chatRefused] = asked.map(([a]) => a);
    expect(JSON.parse(list!.text)).toMatchObject({ data: [{ type: "model" }, { type: "model" }], has_more: true });
    expect([ok, count, refused].map((a) => a!.headers.get("request-id"))).not.toContain(null);
    expect([refused, chatRefused].map((a) => a!.headers.get("x-should-retry"))).toEqual(["false", "false"]);
  });

  it("x-mg-idempotency-key: the document takes the ULIDs and UUIDs the gateway takes and refuses what it refuses", async () => {
    const chat = { model: "openai/gpt-4o-mini", messages: hello };
    const keys = [ulid(), randomUUID(), "not-a-ulid", "retry-7"];
    const asked: [Asked, number][] = [];
    for (const [i, key] of keys.entries()) {
      asked.push([await ask("POST", "/v1/chat/completions", "/v1/chat/completions", { key: SANDBOX, headers: { "x-mg-idempotency-key": key }, body: chat }), i < 2 ? 200 : 400]);
    }
    const documentTakes = keys.map((key) => contract.parameterProblem("POST", "/v1/chat/completions", "header", "x-mg-idempotency-key", key) === undefined);
    expect(documentTakes).toEqual(asked.map(([a]) => a.status === 200));
    expectDocumented(asked);
  });

  it("Gemini's pageSize: a size past 1000 is taken (a page holds 1000 at most, as Google's), a negative one refused, by the gateway and the document alike", async () => {
    const goog = { "x-goog-api-key": SANDBOX };
    const sizes = [1001, 3, -1];
    const asked: [Asked, number][] = [];
    for (const size of sizes) asked.push([await ask("GET", "/v1beta/models", `/v1beta/models?pageSize=${size}`, { headers: goog }), size < 0 ? 400 : 200]);
    const documentTakes = sizes.map((size) => contract.parameterProblem("GET", "/v1beta/models", "query", "pageSize", size) === undefined);
    expect(documentTakes).toEqual(asked.map(([a]) => a.status === 200));
    expectDocumented(asked);
    expect(JSON.parse(asked[0]![0].text).models.length).toBeLessThanOrEqual(1000);
  });
});
