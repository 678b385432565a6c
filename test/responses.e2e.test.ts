// POST /v1/responses (stateless slice of issue 13) with the official openai client: responses.create, responses.stream
// with finalResponse(), and a function-tool loop sending the whole input back, on an OpenAI-protocol, an Anthropic
// and a Gemini model (faithful fakes) and through the simulator with a sandbox key; policies on the endpoint.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { weatherTools, readResponseStream } from "./helpers/responses-fixtures.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const LIVE = testKey("responses-e2e");
const SANDBOX = testKey("responses-e2e", true);
let up: FakeOpenAI;
let claude: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  [up, claude, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  gw = await startTestGateway({
    providers: {
      up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] },
      "anthropic/claude-sonnet-4": { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-20250514", pricing: { input: "0.000003", output: "0.000015" } }] },
      "google/gemini-2.5-flash": { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE), keyEntry("sandbox", SANDBOX)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), claude?.close(), gemini?.close()]);
});

const tools = weatherTools;

const cases = [
  { model: "openai/gpt-4o-mini", text: /Hello from the fake upstream/, last: () => up.requests.at(-1)!, path: "/v1/chat/completions" },
  { model: "anthropic/claude-sonnet-4", text: /Hello from the fake Anthropic upstream/, last: () => claude.requests.at(-1)!, path: "/v1/messages" },
  { model: "google/gemini-2.5-flash", text: /Hello from the fake Gemini upstream/, last: () => gemini.requests.at(-1)!, path: "/v1beta/models/gemini-2.5-flash:" },
];

describe.each(cases)("responses on $model", ({ model, text, last, path }) => {
  it("responses.create: a completed response with output_text and usage; instructions reach the upstream", async () => {
    const r = await client.responses.create({ model, instructions: "Be brief.", input: "Hi", max_output_tokens: 100 });
    expect(r.object).toBe("response");
    expect(r.id).toMatch(/^resp_/);
    expect(r.status).toBe("completed");
    expect(r.output_text).toMatch(text);
    expect(r.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
    expect(r.usage!.output_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    expect(r.instructions).toBe("Be brief.");
    expect((r as { store?: boolean }).store).toBe(true); // the default: kept (test/responses-state.e2e.test.ts)
    expect(last().path).toContain(path);
    expect(JSON.stringify(last().body)).toContain("Be brief.");
  });

  it("responses.stream: ordered semantic events with sequence numbers, finalResponse() matches the deltas", async () => {
    const stream = client.responses.stream({ model, input: [{ role: "user", content: [{ type: "input_text", text: "Hi" }] }] });
    const { types, seqs, deltas, final } = await readResponseStream(stream);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    expect(types.slice(-4)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    expect(deltas).toMatch(text);
    expect(final.output_text).toBe(deltas);
    expect(final.status).toBe("completed");
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
  });

  it.each([false, true])("function-tool loop sending the whole input back (stream=%s)", async (streamed) => {
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const call = (i: OpenAI.Responses.ResponseInput) => streamed
      ? client.responses.stream({ model, input: i, tools, parallel_tool_calls: false }).finalResponse()
      : client.responses.create({ model, input: i, tools, parallel_tool_calls: false });
    const first = await call(input);
    const calls = first.output.filter((o) => o.type === "function_call");
    expect(calls).toHaveLength(1);
    const fc = calls[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc.name).toBe("get_weather");
    expect(JSON.parse(fc.arguments)).toMatchObject({ city: expect.any(String) });
    input.push(...first.output.filter((o) => o.type === "function_call" || o.type === "message") as OpenAI.Responses.ResponseInputItem[]);
    input.push({ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) });
    const second = await call(input);
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(second.output_text.length).toBeGreaterThan(0);
    // The upstream saw the tool result tied to the call id it issued.
    expect(JSON.stringify(last().body)).toContain("temp");
  });
});

describe("responses: sandbox, structured output, policies, refusals", () => {
  it("the sandbox key works through the simulator (create and stream)", async () => {
    const sim = new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0 });
    const before = up.requests.length;
    const r = await sim.responses.create({ model: "openai/gpt-4o-mini", input: "Hi" });
    expect(r.status).toBe("completed");
    expect(r.output_text.length).toBeGreaterThan(0);
    const s = await sim.responses.stream({ model: "openai/gpt-4o-mini", input: "Hi", tools, tool_choice: { type: "function", name: "get_weather" } }).finalResponse();
    expect(s.output.some((o) => o.type === "function_call" && o.name === "get_weather")).toBe(true);
    expect(up.requests.length).toBe(before);
  });

  it("text.format json_schema: structured output, parsed JSON matching the schema", async () => {
    const schema = { type: "object", properties: { city: { type: "string" }, temp: { type: "number" } }, required: ["city", "temp"], additionalProperties: false };
    const r = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Weather?", text: { format: { type: "json_schema", name: "weather", schema, strict: true } } });
    expect(up.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "weather", schema, strict: true } });
    expect(JSON.parse(r.output_text)).toEqual({ city: expect.any(String), temp: expect.any(Number) });
  });

  it("every response is in the usage ledger; no key is a 401 in the OpenAI envelope", async () => {
    const { data, response } = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Hi" }).withResponse();
    const requestId = response.headers.get("x-request-id");
    const rows = (await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: "responses", inputTokens: data.usage!.input_tokens, outputTokens: data.usage!.output_tokens });
    const noKey = await postJson(`${gw.baseURL}/responses`, { model: "openai/gpt-4o-mini", input: "Hi" });
    expect(noKey.status).toBe(401);
    expect(noKey.json.error).toMatchObject({ code: "INVALID_API_KEY", message: expect.any(String) });
  });

  it("a failure after the stream started is the protocol's error event, which the openai client throws", async () => {
    up.failures.push({ kind: "die-mid-stream", afterChunks: 2 });
    const stream = client.responses.stream({ model: "openai/gpt-4o-mini", input: "Hi" });
    const types: string[] = [];
    const err = await (async () => { for await (const e of stream) types.push(e.type); })().catch((e) => e);
    // An APIError from the in-band event (a cut connection would be a different error), in the OpenAI envelope.
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.error).toMatchObject({ code: expect.stringMatching(/UPSTREAM/), message: expect.any(String) });
    expect(types[0]).toBe("response.created");
    expect(types).not.toContain("response.completed");
  });

  it("reasoning on an Anthropic model: the thinking text is a reasoning item (JSON and stream)", async () => {
    const model = "anthropic/claude-sonnet-4";
    const r = await client.responses.create({ model, input: "Hi", reasoning: { effort: "low" }, max_output_tokens: 4000 });
    expect(claude.requests.at(-1)!.body.thinking).toMatchObject({ type: "enabled" });
    expect(r.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    const s = await client.responses.stream({ model, input: "Hi", reasoning: { effort: "low" }, max_output_tokens: 4000 }).finalResponse();
    expect(s.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect((s.output[0] as OpenAI.Responses.ResponseReasoningItem).summary[0]!.text.length).toBeGreaterThan(0);
  });

  it("openapi.json describes the endpoint with its request schema", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    const op = Object.entries(doc.paths).find(([path]) => path.endsWith("/responses"))?.[1] as any;
    expect(op?.post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ResponsesRequest" });
    expect(doc.components.schemas.ResponsesRequest.required).toEqual(["model"]); // input is optional in the SDK (a stored prompt)
  });

  it("an unknown previous_response_id is a 404 naming the field (test/responses-state.e2e.test.ts has the rest); a forced built-in tool is a 400 naming the field; a bad body is a 400", async () => {
    const auth = { authorization: `Bearer ${LIVE}` };
    const prev = await postJson(`${gw.baseURL}/responses`, { model: "openai/gpt-4o-mini", input: "Hi", previous_response_id: "resp_x" }, auth);
    expect(prev.status).toBe(404);
    expect(prev.json.error).toMatchObject({ code: "NOT_FOUND", param: "previous_response_id" });
    const builtin = await postJson(`${gw.baseURL}/responses`, { model: "openai/gpt-4o-mini", input: "Hi", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, auth);
    expect(builtin.status).toBe(400);
    expect(builtin.json.error).toMatchObject({ param: "tool_choice.type" });
    expect(builtin.json.error.message).toContain("web_search");
    const bad = await postJson(`${gw.baseURL}/responses`, { model: "openai/gpt-4o-mini" }, auth);
    expect(bad.status).toBe(400);
  });
});
