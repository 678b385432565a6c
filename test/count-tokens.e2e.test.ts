// POST /api/v1/messages/count_tokens end to end with the Anthropic SDK's messages.countTokens: passthrough to an
// Anthropic upstream, Gemini's countTokens, the local tokenizer for OpenAI-protocol models (checked against counts
// the OpenAI API billed), the simulator for sandbox keys; Anthropic error classes for auth, allowlist, unknown and
// unsupported models; never billed (no ledger record, no budget hold, one request and no tokens against limits), but
// refused with 402 once the project's budget is used up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { FAKE_ANTHROPIC_KEY, fakeInputTokens, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, fakeTotalTokens, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateCountTokensResult } from "../core/generated/validators.js";
import { healthOf } from "../core/health/index.ts";
import { toPico } from "../core/money/money.ts";

const LIVE = testKey("count-e2e");
const SANDBOX = testKey("count-e2e-sb", true);
const LIMITED = testKey("count-e2e-lim");
const CAPPED = testKey("count-e2e-cap");
const SPENT = testKey("count-e2e-spent");
const SPENT_SANDBOX = testKey("count-e2e-spent-sb", true);
const claude = "anthropic/claude-sonnet-4.5";
const gemini = "google/gemini-2.5-flash";
const price = { input: "0.000001", output: "0.000002" };
let ant: FakeAnthropic;
let gem: FakeGemini;
let oai: FakeOpenAI;
let gw: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  [ant, gem, oai] = await Promise.all([startFakeAnthropic(), startFakeGemini(), startFakeOpenAI()]);
  gw = await startTestGateway({
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1, cooldown_ms: 600_000 } },
    providers: {
      claude: { protocol: "anthropic", base_url: ant.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gem.baseUrl, api_key: FAKE_GEMINI_KEY },
      up: { protocol: "openai", base_url: oai.baseUrl, api_key: "sk-fake-upstream" },
      rr: { protocol: "cohere", base_url: "http://127.0.0.1:9", api_key: "co-fake" },
    },
    models: {
      [claude]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: price }] },
      [gemini]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: price }] },
      "openai/gpt-4o": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-prod-deployment", pricing: price }] },
      "openai/gpt-4": { type: "language", endpoints: [{ provider: "up", model: "gpt-4", pricing: price }] },
      "openai/gpt-4.1": { type: "language", endpoints: [{ provider: "up", model: "gpt-4.1", pricing: price }] },
      "meta/llama-3.3-70b": { type: "language", endpoints: [{ provider: "up", model: "llama-3.3-70b-versatile", pricing: price }] },
      "openai/text-embedding-3-small": { type: "embedding", endpoints: [{ provider: "up", model: "text-embedding-3-small", pricing: price }] },
      "cohere/command-a": { type: "language", endpoints: [{ provider: "rr", model: "command-a-03-2025", pricing: price }] },
    },
    projects: {
      acme: { keys: [keyEntry("ci", LIVE), keyEntry("sb", SANDBOX)] },
      limited: { keys: [keyEntry("lim", LIMITED)], allow_models: ["openai/*"] },
      capped: { keys: [keyEntry("cap", CAPPED)], budget: { usd: "0.000001", period: "month" }, rate_limits: { rpm: 2, tpm: 10 } },
      spent: { keys: [keyEntry("spent", SPENT), keyEntry("spent-sb", SPENT_SANDBOX)], budget: { usd: "0.01", period: "month" } },
    },
  });
  client = new Anthropic({ apiKey: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([ant?.close(), gem?.close(), oai?.close()]);
});

const tools: Anthropic.Tool[] = [{
  name: "get_current_weather",
  description: "Get the current weather in a given location",
  input_schema: {
    type: "object",
    properties: {
      location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
      unit: { type: "string", description: "The unit of temperature to return", enum: ["celsius", "fahrenheit"] },
    },
    required: ["location"],
  },
}];
const weather = {
  system: "You are a helpful assistant that can answer to questions about the weather.",
  messages: [{ role: "user" as const, content: "What's the weather like in San Francisco?" }],
  tools,
};

/** The raw answer too, for headers (the SDK's withResponse). */
async function countWith(c: Anthropic, params: Anthropic.MessageCountTokensParams) {
  const { data, response } = await c.messages.countTokens(params).withResponse();
  expect(validateCountTokensResult(data)).toBe(true);
  return { tokens: data.input_tokens, source: response.headers.get("x-mg-token-count"), requestId: response.headers.get("x-request-id"), upstreamRequestId: response.headers.get("x-mg-upstream-request-id") };
}
const ledgerOf = async (requestId: string | null) => (await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId);

describe("count_tokens on each kind of upstream", () => {
  it("Anthropic: passthrough to /v1/messages/count_tokens with the upstream id and the client's version and beta headers", async () => {
    const before = ant.requests.length;
    const { tokens, source, requestId, upstreamRequestId } = await countWith(client, { model: claude, ...weather, thinking: { type: "enabled", budget_tokens: 2048 } });
    // Anthropic's own request-id is passed on, as a generation's is, for a support ticket about the count.
    expect(upstreamRequestId).toBe("req_fake_anthropic");
    const seen = ant.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe("/v1/messages/count_tokens");
    expect(seen[0]!.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(seen[0]!.body).toEqual({ model: "claude-sonnet-4-5-20250929", ...weather, thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(tokens).toBe(fakeInputTokens(weather));
    expect(source).toBe("upstream");
    expect(await ledgerOf(requestId)).toEqual([]);

    await client.messages.countTokens({ model: claude, messages: weather.messages }, { headers: { "anthropic-version": "2023-06-01", "anthropic-beta": "token-counting-2024-11-01" } });
    expect(ant.requests.at(-1)!.headers).toMatchObject({ "anthropic-version": "2023-06-01", "anthropic-beta": "token-counting-2024-11-01", "x-api-key": FAKE_ANTHROPIC_KEY });
  });

  it("Anthropic: the upstream's refusal is the client's BadRequestError with the provider's message", async () => {
    // max_tokens is not part of a count request; the gateway leaves it out rather than have the upstream refuse it.
    const r = await postJson(`${gw.baseURL}/messages/count_tokens`, { model: claude, max_tokens: 100, messages: weather.messages }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(200);
    expect(ant.requests.at(-1)!.body.max_tokens).toBeUndefined();
    ant.failures.push({ kind: "status", status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" });
    const err = await client.messages.countTokens({ model: claude, messages: weather.messages }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.message).toContain("prompt is too long");
  });

  it("Anthropic: a conversation that was on another model is counted as the generation would send it (no gateway-signed or unsigned thinking, thinking off when the tool loop then lacks it)", async () => {
    // An assistant turn made on a chat model through the gateway: its thinking block carries the gateway's blob, which
    // Anthropic cannot verify; the generation strips it (and turns thinking off), so the count must too.
    const params: Anthropic.MessageCountTokensParams = {
      model: claude, thinking: { type: "enabled", budget_tokens: 2048 }, tools,
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: [
          { type: "thinking", thinking: "The user wants weather.", signature: "mgr1.eyJwIjoiY2hhdCIsIm4iOiJkcyIsImQiOltdfQ" },
          { type: "thinking", thinking: "unsigned", signature: "" },
          { type: "tool_use", id: "call_1", name: "get_current_weather", input: { location: "Paris" } },
        ] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "18C" }] },
      ],
    };
    const before = ant.requests.length;
    const { tokens } = await countWith(client, params);
    const counted = ant.requests.slice(before)[0]!.body;
    expect(JSON.stringify(counted)).not.toContain("mgr1.");
    expect(counted.messages[1].content.map((b: any) => b.type)).toEqual(["tool_use"]);
    expect(counted.thinking).toEqual({ type: "disabled" });
    // The generation of the same conversation sends the same messages (the fake refuses what Anthropic refuses).
    const msg = await client.messages.create({ ...params, max_tokens: 100 } as Anthropic.MessageCreateParamsNonStreaming);
    expect(msg.type).toBe("message");
    expect(ant.requests.at(-1)!.body.messages).toEqual(counted.messages);
    expect(tokens).toBe(fakeInputTokens(counted));
  });

  it("Gemini: models/{m}:countTokens with a generateContentRequest carrying system instruction and tools", async () => {
    const before = gem.requests.length;
    const { tokens, source } = await countWith(client, { model: gemini, ...weather });
    const seen = gem.requests.slice(before);
    expect(seen.map((r) => r.path)).toEqual(["/v1beta/models/gemini-2.5-flash:countTokens"]);
    const g = seen[0]!.body.generateContentRequest;
    expect(g.model).toBe("models/gemini-2.5-flash");
    expect(g.contents).toEqual([{ role: "user", parts: [{ text: "What's the weather like in San Francisco?" }] }]);
    expect(g.systemInstruction).toEqual({ parts: [{ text: weather.system }] });
    expect(g.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(["get_current_weather"]);
    expect(g.generationConfig).toBeUndefined();
    expect(tokens).toBe(fakeTotalTokens(g));
    expect(source).toBe("upstream");
  });

  it("OpenAI: counted locally with the model's encoding, as the OpenAI API bills it (101 on gpt-4o, 105 on gpt-4)", async () => {
    // The cookbook's weather request, which the OpenAI API billed at these prompt_tokens.
    expect(await countWith(client, { model: "openai/gpt-4o", ...weather })).toMatchObject({ tokens: 101, source: "tokenizer:o200k_base" });
    expect(await countWith(client, { model: "openai/gpt-4", ...weather })).toMatchObject({ tokens: 105, source: "tokenizer:cl100k_base" });
    expect(oai.requests).toHaveLength(0);
  });

  it("a count neither is refused by an open circuit nor closes it (it says nothing about the endpoint's health)", async () => {
    const model = "openai/gpt-4.1";
    oai.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    await expect(client.messages.create({ model, max_tokens: 10, messages: weather.messages })).rejects.toBeInstanceOf(Anthropic.InternalServerError);
    const health = healthOf(gw.gateway);
    expect(health.stateOf(model, "up")).toBe("open");
    expect((await client.messages.countTokens({ model, ...weather })).input_tokens).toBe(101);
    expect(health.stateOf(model, "up")).toBe("open");
  });

  it("another model on an OpenAI-protocol host: the same count with o200k_base, labelled an estimate", async () => {
    const { tokens, source } = await countWith(client, { model: "meta/llama-3.3-70b", ...weather });
    expect(tokens).toBe(101);
    expect(source).toBe("estimate:o200k_base");
  });

  it("sandbox keys: the simulator's count, the same as the prompt usage it reports for that request", async () => {
    const sandbox = new Anthropic({ apiKey: SANDBOX, baseURL: gw.url + "/api", maxRetries: 0 });
    const before = ant.requests.length;
    const { tokens, source } = await countWith(sandbox, { model: claude, ...weather });
    expect(source).toBe("simulator");
    const msg = await sandbox.messages.create({ model: claude, max_tokens: 50, ...weather });
    expect(tokens).toBe(msg.usage.input_tokens);
    expect(tokens).toBeGreaterThan(0);
    expect(ant.requests.length).toBe(before);
  });
});

describe("count_tokens errors in Anthropic's envelope", () => {
  it("a missing or unknown key is the SDK's AuthenticationError; Authorization: Bearer works like x-api-key", async () => {
    const none = await postJson(`${gw.baseURL}/messages/count_tokens`, { model: claude, messages: weather.messages });
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const bad = new Anthropic({ apiKey: testKey("nobody"), baseURL: gw.url + "/api", maxRetries: 0 });
    await expect(bad.messages.countTokens({ model: claude, messages: weather.messages })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const bearer = new Anthropic({ apiKey: null, authToken: LIVE, baseURL: gw.url + "/api", maxRetries: 0 });
    expect((await bearer.messages.countTokens({ model: "openai/gpt-4o", ...weather })).input_tokens).toBe(101);
  });

  it("the allowlist applies: PermissionDeniedError", async () => {
    const limited = new Anthropic({ apiKey: LIMITED, baseURL: gw.url + "/api", maxRetries: 0 });
    await expect(limited.messages.countTokens({ model: claude, messages: weather.messages })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((await limited.messages.countTokens({ model: "openai/gpt-4o", ...weather })).input_tokens).toBe(101);
  });

  it("an unknown model is NotFoundError; a model that cannot be counted is BadRequestError, never input_tokens 0", async () => {
    await expect(client.messages.countTokens({ model: "nobody/nothing", messages: weather.messages })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const embedding = await client.messages.countTokens({ model: "openai/text-embedding-3-small", messages: weather.messages }).catch((e) => e);
    expect(embedding).toBeInstanceOf(Anthropic.BadRequestError);
    expect(embedding.message).toContain("needs a language model");
    const unsupported = await postJson(`${gw.baseURL}/messages/count_tokens`, { model: "cohere/command-a", messages: weather.messages }, { "x-api-key": LIVE });
    expect(unsupported.status).toBe(400);
    expect(unsupported.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(unsupported.json.error.message).toContain("does not support countTokens");
  });

  it("a body that is not a count request names the field", async () => {
    const err = await client.messages.countTokens({ model: claude, messages: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.message).toContain("messages");
  });
});

describe("count_tokens and a used-up budget (issue 25)", () => {
  it("once the project's spend has reached its budget, count_tokens is a 402 BUDGET_EXCEEDED like a generation, and nothing is counted", async () => {
    const spender = new Anthropic({ apiKey: SPENT, baseURL: gw.url + "/api", maxRetries: 0 });
    const ask = { model: claude, messages: weather.messages };
    // Budget left: counted (nothing is reserved for a count, so it is not refused for what a generation might cost).
    expect((await countWith(spender, ask)).tokens).toBeGreaterThan(0);
    await gw.gateway.store.record({
      generationId: `gen_seed_${Date.now()}`, requestId: "seed", ts: Date.now(), keyId: "spent", project: "spent", endpoint: "chat",
      model: claude, provider: "claude", attempts: 1, inputTokens: 10_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0,
      reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: "0.01", costPico: toPico("0.01"), latencyMs: 1,
      ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
    });
    const before = ant.requests.length;
    await expect(spender.messages.create({ ...ask, max_tokens: 10 })).rejects.toMatchObject({ status: 402 });
    for (const model of [claude, "openai/gpt-4o"]) {
      const r = await postJson(`${gw.baseURL}/messages/count_tokens`, { model, messages: weather.messages }, { "x-api-key": SPENT });
      expect(r.status).toBe(402);
      expect(r.json.error).toMatchObject({ code: "BUDGET_EXCEEDED", details: { project: "spent", budget_usd: "0.01", spent_usd: "0.01", available_usd: "0" } });
      expect(r.json.error.message).toContain("has reached its monthly budget of $0.01");
    }
    expect(ant.requests.length).toBe(before);
    // Sandbox keys never touch a budget, counting included.
    expect((await countWith(new Anthropic({ apiKey: SPENT_SANDBOX, baseURL: gw.url + "/api", maxRetries: 0 }), ask)).source).toBe("simulator");
  });
});

describe("count_tokens in the API description", () => {
  it("openapi.json has the route with its request and response schemas", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    const op = doc.paths["/v1/messages/count_tokens"].post;
    expect(op.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/CountTokensRequest");
    expect(op.responses["200"].content["application/json"].schema.$ref).toBe("#/components/schemas/CountTokensResult");
    expect(doc.components.schemas.CountTokensRequest.required).toEqual(["model", "messages"]);
    expect(doc.components.schemas.CountTokensRequest.properties.messages.items.$ref).toBe("#/components/schemas/MessagesRequest_Message");
    // The Anthropic SDK sends its key as x-api-key (these tests' clients do): both Anthropic-protocol routes say so.
    expect(doc.components.securitySchemes.anthropicApiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    for (const path of ["/v1/messages/count_tokens", "/v1/messages"]) expect(doc.paths[path].post.security).toEqual([{ bearerAuth: [] }, { anthropicApiKey: [] }]);
    expect(doc.paths["/v1/chat/completions"].post.security).toBeUndefined(); // the document's default: Bearer only
    expect(doc.paths["/v1/embeddings"].post.responses["422"]).toBeDefined();
  });
});

describe("count_tokens is not billed", () => {
  it("no budget hold and no ledger record; one request against rpm and no tokens against tpm", async () => {
    const capped = new Anthropic({ apiKey: CAPPED, baseURL: gw.url + "/api", maxRetries: 0 });
    const long = { model: "openai/gpt-4o", messages: [{ role: "user" as const, content: "A sentence long enough to be far over ten tokens per minute. ".repeat(4) }] };
    // The same project cannot afford a generation: the budget is armed.
    await expect(capped.messages.create({ ...long, max_tokens: 10 })).rejects.toMatchObject({ status: 402 });
    const first = await countWith(capped, long);
    const second = await countWith(capped, long);
    expect(first.tokens).toBeGreaterThan(10);
    expect(second.tokens).toBe(first.tokens);
    expect(await ledgerOf(first.requestId)).toEqual([]);
    expect(await ledgerOf(second.requestId)).toEqual([]);
    await expect(capped.messages.countTokens(long)).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });
});
