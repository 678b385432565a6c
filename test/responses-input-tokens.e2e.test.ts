// POST /api/v1/responses/input_tokens with the openai SDK's responses.inputTokens.count: OpenAI's answer shape, the
// count made through the translation create uses (Anthropic's own count, Gemini's countTokens, the local tokenizer for
// OpenAI-protocol models, the simulator for sandbox keys), so web_search counts where create serves it; previous_response_id followed as a create follows it; the
// key, allowlist and unknown-model refusals of any other request; never billed. POST /api/v1/responses/compact is a
// 404 naming the endpoint, not the 405 of /responses/{id}.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, fakeInputTokens, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateResponseInputTokens } from "../core/generated/validators.js";

const LIVE = testKey("rsp-count");
const SANDBOX = testKey("rsp-count-sb", true);
const LIMITED = testKey("rsp-count-lim");
const CLAUDE = "anthropic/claude-sonnet-4.5";
const GEMINI = "google/gemini-2.5-flash";
const GPT = "openai/gpt-4o";
const price = { input: "0.000001", output: "0.000002" };
let ant: FakeAnthropic;
let gem: FakeGemini;
let oai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [ant, gem, oai] = await Promise.all([startFakeAnthropic(), startFakeGemini(), startFakeOpenAI()]);
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: ant.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gem.baseUrl, api_key: FAKE_GEMINI_KEY },
      up: { protocol: "openai", base_url: oai.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      [CLAUDE]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: price }] },
      [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: price }] },
      [GPT]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4o", pricing: price }] },
    },
    projects: {
      acme: { keys: [keyEntry("ci", LIVE), keyEntry("sb", SANDBOX)] },
      limited: { keys: [keyEntry("lim", LIMITED)], allow_models: ["openai/*"] },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([ant?.close(), gem?.close(), oai?.close()]);
});

const client = (key = LIVE) => new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries: 0 });
const ask = { instructions: "Be brief.", input: "What's the weather like in San Francisco?" };

async function count(params: OpenAI.Responses.InputTokenCountParams, key = LIVE) {
  const { data, response } = await client(key).responses.inputTokens.count(params).withResponse();
  expect(validateResponseInputTokens(data), JSON.stringify(validateResponseInputTokens.errors)).toBe(true);
  return { data, source: response.headers.get("x-mg-token-count"), requestId: response.headers.get("x-request-id") };
}

describe("responses.inputTokens.count", () => {
  it("Anthropic counts the request as a create would send it, instructions as its system prompt, in OpenAI's answer shape", async () => {
    const { data, source, requestId } = await count({ model: CLAUDE, ...ask, max_output_tokens: 100 } as OpenAI.Responses.InputTokenCountParams);
    const seen = ant.requests.at(-1)!;
    expect(seen.path).toBe("/v1/messages/count_tokens");
    expect(seen.body).toMatchObject({ model: "claude-sonnet-4-5-20250929", system: expect.anything(), messages: [{ role: "user" }] });
    expect(JSON.stringify(seen.body.system)).toContain("Be brief.");
    expect(seen.body.max_tokens).toBeUndefined();
    expect(data).toEqual({ object: "response.input_tokens", input_tokens: fakeInputTokens(seen.body), providerMetadata: expect.anything() });
    expect(source).toBe("upstream");
    expect((await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId)).toEqual([]);
  });

  it("Gemini, an OpenAI-protocol model and the simulator count too, each saying how", async () => {
    const g = await count({ model: GEMINI, ...ask });
    expect(gem.requests.at(-1)!.path).toMatch(/:countTokens$/);
    expect(g.data.input_tokens).toBeGreaterThan(0);
    expect(g.source).toBe("upstream");
    const o = await count({ model: GPT, ...ask });
    expect(o.data.input_tokens).toBeGreaterThan(5);
    expect(o.source).toMatch(/^tokenizer:/);
    const s = await count({ model: GPT, ...ask }, SANDBOX);
    expect(s.data.input_tokens).toBeGreaterThan(5);
    expect(s.source).toBe("simulator");
  });

  it("previous_response_id counts the earlier turns as a create would send them", async () => {
    const first = await client(SANDBOX).responses.create({ model: GPT, input: "Tell me a long story about gateways and their many models." });
    const alone = await count({ model: GPT, input: "And then?" }, SANDBOX);
    const continued = await count({ model: GPT, input: "And then?", previous_response_id: first.id }, SANDBOX);
    expect(continued.data.input_tokens).toBeGreaterThan(alone.data.input_tokens + 10);
    await expect(client(SANDBOX).responses.inputTokens.count({ model: GPT, input: "x", previous_response_id: "resp_nope" })).rejects.toMatchObject({ status: 404, message: expect.stringContaining("previous_response_id") });
  });

  it("refuses as any request does: no model, an unknown one, one outside the allowlist, a bad key", async () => {
    await expect(client().responses.inputTokens.count({ input: "hi" })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("model") });
    await expect(client().responses.inputTokens.count({ model: "openai/nope-9", input: "hi" })).rejects.toMatchObject({ status: 404 });
    await expect(client(LIMITED).responses.inputTokens.count({ model: CLAUDE, input: "hi" })).rejects.toMatchObject({ status: 403 });
    await expect(client("mg_live_wrongwrongwrong0").responses.inputTokens.count({ model: GPT, input: "hi" })).rejects.toMatchObject({ status: 401 });
  });
});

describe("a translated target is counted as its create is translated", () => {
  // web_search was read as Anthropic's web_search_20250305 and refused by every upstream but Claude, while create
  // answers: the count now goes through the create's own translation (Responses -> chat, -> Gemini) and its count.
  const search = { input: "Latest gateway news?", tools: [{ type: "web_search" as const }] };
  const targets: Array<[string, string, string, RegExp]> = [
    ["the simulator (sandbox key)", GPT, SANDBOX, /^simulator$/],
    ["an OpenAI chat model", GPT, LIVE, /^tokenizer:o200k_base$/],
    ["Gemini", GEMINI, LIVE, /^upstream$/],
  ];

  it.each(targets)("%s: web_search is counted where create answers, not a 400 naming web_search_20250305", async (_name, model, key, how) => {
    const created = await client(key).responses.create({ model, ...search, store: false });
    expect(created.status).toBe("completed");
    const { data, source } = await count({ model, ...search }, key);
    expect(source).toMatch(how);
    expect(data.input_tokens).toBeGreaterThan(0);
  });

  it("the simulator's count is the input its create reports", async () => {
    const created = await client(SANDBOX).responses.create({ model: GPT, instructions: "Be brief.", ...search, store: false });
    const { data } = await count({ model: GPT, instructions: "Be brief.", ...search }, SANDBOX);
    expect(data.input_tokens).toBe(created.usage!.input_tokens);
  });

  it("Gemini counts the googleSearch tool create sends it", async () => {
    await count({ model: GEMINI, ...search });
    const counted = gem.requests.at(-1)!;
    expect(counted.path).toMatch(/:countTokens$/);
    expect(counted.body.generateContentRequest.tools).toEqual([{ googleSearch: {} }]);
  });

  it("a request create refuses is refused the same, naming the client's field", async () => {
    const body = { model: GPT, ...search, tool_choice: { type: "file_search" } } as never;
    const created = await client().responses.create(body).catch((e) => e);
    const counted = await client().responses.inputTokens.count(body).catch((e) => e);
    expect(counted.status).toBe(400);
    expect(counted.message).toBe(created.message);
    expect(counted.message).toContain("tool_choice");
  });
});

describe("responses.compact", () => {
  it("is a 404 naming the endpoint as not supported, not a 405 sending the caller to GET it", async () => {
    const err = await client().responses.compact({ model: GPT, input: [{ role: "user", content: "hello" }] } as never).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.message).toMatch(/\/v1\/responses\/compact .*not supported/);
    const res = await fetch(`${gw.baseURL}/responses/compact`, { method: "POST", headers: { authorization: `Bearer ${LIVE}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: "NOT_FOUND" });
  });
});
