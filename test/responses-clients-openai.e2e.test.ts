// The official openai client against /v1/responses on the gateway as shipped (SQLite, full default pipeline), on an
// OpenAI-backed, an Anthropic-backed and a Gemini-backed model (faithful fakes): responses.create, responses.stream
// with finalResponse(), responses.parse with a zod schema, a function-tool loop chained by previous_response_id and
// the same loop with store: false sending the whole input back; then the policies on the endpoint.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { ulid } from "ulid";
import { ALLOW_KEY, BACKENDS, BROKE_KEY, KEY, LIMITED_KEY, LIMITED_RPM, PROJECT, startResponsesClients, type ResponsesClientsEnv } from "./helpers/responses-clients.ts";
import { readResponseStream } from "./helpers/responses-fixtures.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

let env: ResponsesClientsEnv;
/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());
const client = (key = KEY) => new OpenAI({ apiKey: key, baseURL: env.gw.baseURL, maxRetries: 0, fetch: shapes.fetch });

beforeAll(async () => {
  env = await startResponsesClients();
});
afterAll(async () => {
  await env?.close();
});

const tools: OpenAI.Responses.FunctionTool[] = [{
  type: "function", name: "get_weather", description: "Weather in a city", strict: true,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
}];
const ledgerOf = async (requestId: string | null) =>
  (await env.gw.gateway.store.ledger({ project: PROJECT })).filter((e) => e.requestId === requestId);

describe.each(BACKENDS)("openai client on $model", ({ model, upstream, path }) => {
  const last = () => env.requestsOf(upstream).at(-1)!;

  it("responses.create: a completed response with output_text and usage, one ledger row with endpoint responses", async () => {
    const before = env.requestsOf(upstream).length;
    const { data: r, response } = await client().responses.create({ model, instructions: "Be brief.", input: "Hello" }).withResponse();
    expect(r).toMatchObject({ object: "response", status: "completed" });
    expect(r.id).toMatch(/^resp_/);
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    expect(env.requestsOf(upstream).length).toBe(before + 1);
    expect(last().path).toMatch(path);
    expect(JSON.stringify(last().body)).toContain("Be brief.");
    const rows = await ledgerOf(response.headers.get("x-request-id"));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: "responses", model, inputTokens: r.usage!.input_tokens, outputTokens: r.usage!.output_tokens });
    expect(Number(rows[0]!.costUsd)).toBeGreaterThan(0);
  });

  it("responses.stream: events in order with sequence numbers; finalResponse() is the text of the deltas", async () => {
    const stream = client().responses.stream({ model, input: "Hello" });
    const { types, seqs, deltas, final } = await readResponseStream(stream);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.output_item.done");
    expect(deltas.length).toBeGreaterThan(0);
    expect(final.output_text).toBe(deltas);
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
    expect(last().path).toMatch(path);
  });

  it("responses.parse with zodTextFormat: output_parsed matches the schema", async () => {
    const Weather = z.object({ city: z.string(), temp: z.number(), tags: z.array(z.string()) });
    const r = await client().responses.parse({ model, input: "Weather in Paris as JSON", text: { format: zodTextFormat(Weather, "weather") } });
    expect(r.status).toBe("completed");
    expect(Weather.parse(r.output_parsed)).toEqual(r.output_parsed);
    expect(r.output_parsed).toMatchObject({ city: expect.any(String), temp: expect.any(Number) });
    // The schema reached the upstream in its own protocol (a name-free constraint would not produce this shape).
    expect(JSON.stringify(last().body)).toContain("temp");
  });

  it("a function-tool loop chained by previous_response_id: only the tool output is sent the second time", async () => {
    const c = client();
    const first = await c.responses.create({ model, input: "Weather in Paris?", tools, parallel_tool_calls: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc?.name).toBe("get_weather");
    expect(JSON.parse(fc.arguments)).toMatchObject({ city: expect.any(String) });
    const second = await c.responses.create({
      model, previous_response_id: first.id, tools,
      input: [{ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) }],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(second.output_text.length).toBeGreaterThan(0);
    // The upstream got the whole conversation (or the native chain): the question and the tool result.
    const sent = JSON.stringify(last().body);
    expect(sent).toContain("temp");
    if (!last().body.previous_response_id) expect(sent).toContain("Weather in Paris?");
    // Both are stored: retrieve gives them back, input_items lists what was sent.
    expect((await c.responses.retrieve(second.id)).output_text).toBe(second.output_text);
    const items = await c.responses.inputItems.list(second.id);
    expect(items.data.some((i) => i.type === "function_call_output")).toBe(true);
  });

  it("the same loop with store: false, sending the whole input back", async () => {
    const c = client();
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await c.responses.create({ model, input, tools, store: false, parallel_tool_calls: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc?.name).toBe("get_weather");
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    input.push({ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) });
    const second = await c.responses.create({ model, input, tools, store: false });
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(second.output_text.length).toBeGreaterThan(0);
    expect(JSON.stringify(last().body)).toContain("temp");
  });

  it("a response made with store: false is kept nowhere: neither retrievable nor a previous_response_id", async () => {
    const c = client();
    const r = await c.responses.create({ model, input: "Hi", store: false });
    await expect(c.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(c.responses.create({ model, input: "more", previous_response_id: r.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("one conversation across backends, chained by previous_response_id", () => {
  it("native OpenAI -> Anthropic -> Gemini -> native OpenAI: each upstream gets what it can continue from", async () => {
    const c = client();
    const r1 = await c.responses.create({ model: "openai/gpt-4o-mini", input: "My name is Ada." });
    // The native answer's id is the upstream's own: continuing on the same provider passes it through.
    const same = await c.responses.create({ model: "openai/gpt-4o-mini", input: "Still there?", previous_response_id: r1.id });
    expect(env.openai.requests.at(-1)!.body.previous_response_id).toBe(r1.id);
    expect(same.previous_response_id).toBe(r1.id);
    // Another backend gets the conversation rebuilt from the gateway's store: r1's input and output, then the new input.
    const r2 = await c.responses.create({ model: "anthropic/claude-sonnet-4", input: "What is my name?", previous_response_id: r1.id });
    const toClaude = JSON.stringify(env.anthropic.requests.at(-1)!.body);
    expect(toClaude).toContain("My name is Ada.");
    expect(toClaude).toContain(r1.output_text);
    expect(toClaude).toContain("What is my name?");
    const r3 = await c.responses.create({ model: "google/gemini-2.5-flash", input: "Say it again.", previous_response_id: r2.id });
    const toGemini = JSON.stringify(env.gemini.requests.at(-1)!.body);
    for (const t of ["My name is Ada.", r1.output_text, "What is my name?", r2.output_text, "Say it again."]) expect(toGemini).toContain(t);
    // Back on the native upstream after translated turns: it never saw r3, so it gets the whole conversation.
    await c.responses.create({ model: "openai/gpt-4o-mini", input: "Thanks.", previous_response_id: r3.id });
    const back = env.openai.requests.at(-1)!.body;
    expect(back.previous_response_id).toBeUndefined();
    for (const t of ["My name is Ada.", r2.output_text, r3.output_text, "Thanks."]) expect(JSON.stringify(back.input)).toContain(t);
    // The stored chain lists the whole conversation.
    const items = await c.responses.inputItems.list(r3.id, { order: "asc" });
    expect(JSON.stringify(items.data)).toContain("My name is Ada.");
  });
});

describe("policies on /v1/responses through the openai client (shipped pipeline, SQLite)", () => {
  const failure = (p: Promise<unknown>) => p.then(() => { throw new Error("expected the call to fail"); }, (e) => e as InstanceType<typeof OpenAI.APIError>);

  it("a model outside the project's allowlist: 403 MODEL_NOT_ALLOWED, nothing sent upstream", async () => {
    const before = env.anthropic.requests.length;
    const e = await failure(client(ALLOW_KEY).responses.create({ model: "anthropic/claude-sonnet-4", input: "Hi" }));
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(e.code).toBe("MODEL_NOT_ALLOWED");
    expect(env.anthropic.requests.length).toBe(before);
    // The allowed model goes through with the same key.
    expect((await client(ALLOW_KEY).responses.create({ model: "openai/gpt-4o-mini", input: "Hi" })).status).toBe("completed");
  });

  it("a spent budget: 402 BUDGET_EXCEEDED, on create and on stream", async () => {
    const e = await failure(client(BROKE_KEY).responses.create({ model: "openai/gpt-4o-mini", input: "Hi" }));
    expect(e.status).toBe(402);
    expect(e.code).toBe("BUDGET_EXCEEDED");
    const s = await failure(client(BROKE_KEY).responses.stream({ model: "openai/gpt-4o-mini", input: "Hi" }).finalResponse());
    expect(s.status).toBe(402);
  });

  it("past the rate limit: 429 RATE_LIMITED with Retry-After", async () => {
    const c = client(LIMITED_KEY);
    for (let i = 0; i < LIMITED_RPM; i++) expect((await c.responses.create({ model: "openai/gpt-4o-mini", input: "Hi" })).status).toBe("completed");
    const e = await failure(c.responses.create({ model: "openai/gpt-4o-mini", input: "Hi" }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.code).toBe("RATE_LIMITED");
    expect(Number(e.headers?.get("retry-after"))).toBeGreaterThan(0);
  });

  it("an idempotent replay is the same response, marked replayed, billed once", async () => {
    const key = ulid();
    const body = { model: "anthropic/claude-sonnet-4", input: "Hi" };
    const before = env.anthropic.requests.length;
    const { data: first, response: r1 } = await client().responses.create(body, { headers: { "Idempotency-Key": key } }).withResponse();
    const again = await client().responses.create(body, { headers: { "Idempotency-Key": key } }).withResponse();
    expect(again.data).toEqual(first);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(env.anthropic.requests.length).toBe(before + 1);
    expect(await ledgerOf(r1.headers.get("x-request-id"))).toHaveLength(1);
    // The same key with another body is refused.
    const e = await failure(client().responses.create({ ...body, input: "Other" }, { headers: { "Idempotency-Key": key } }));
    expect(e).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});

describe("metrics", () => {
  it("gateway_requests_total counts /v1/responses by endpoint, model and status (answers and refusals above)", async () => {
    const text = await (await fetch(env.gw.metricsUrl!)).text();
    const count = (re: RegExp) => text.split("\n").filter((l) => l.startsWith("gateway_requests_total{") && l.includes('endpoint="responses"') && re.test(l))
      .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
    for (const { model } of BACKENDS) expect(count(new RegExp(`model="${model}".*code="200"|code="200".*model="${model}"`))).toBeGreaterThan(0);
    for (const code of ["402", "403", "429"]) expect(count(new RegExp(`code="${code}"`))).toBeGreaterThan(0);
  });
});

describe("the endpoint as documented", () => {
  it("openapi.json lists the four routes as available (no 'stateless', no 'coming soon')", async () => {
    const doc = await (await fetch(`${env.gw.url}/api/openapi.json`)).json();
    const route = (re: RegExp) => Object.entries(doc.paths as Record<string, any>).find(([path]) => re.test(path))?.[1];
    expect(route(/\/responses$/)?.post).toBeDefined();
    expect(route(/\/responses\/\{[a-z_]+\}$/)?.get).toBeDefined();
    expect(route(/\/responses\/\{[a-z_]+\}$/)?.delete).toBeDefined();
    expect(route(/\/responses\/\{[a-z_]+\}\/input_items$/)?.get).toBeDefined();
    const text = JSON.stringify(Object.entries(doc.paths).filter(([path]) => path.includes("/responses")));
    expect(text).not.toMatch(/stateless|coming soon|not available/i);
  });
});
