// Stored Responses API state (issue 13) with the official openai client: a function-tool loop continued with
// previous_response_id on an OpenAI-chat, an Anthropic and a Gemini backed model (the upstream receives the whole
// rebuilt conversation), the same loop with store: false, item_reference, retrieve / delete / input_items with
// pagination, isolation between projects, expiry, SQLite across a gateway restart, and openapi.json.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { weatherTools } from "./helpers/responses-fixtures.ts";

const LIVE = testKey("resp-state");
const OTHER = testKey("resp-state-other");
let up: FakeOpenAI;
let claude: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;
let client: OpenAI;
let other: OpenAI;

const config = (store: Record<string, unknown>) => ({
  store,
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
  projects: { acme: { keys: [keyEntry("ci", LIVE)] }, rival: { keys: [keyEntry("rk", OTHER)] } },
});

beforeAll(async () => {
  [up, claude, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  gw = await startTestGateway(config({ kind: "sqlite", path: "./state/gateway.db" }));
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
  other = new OpenAI({ apiKey: OTHER, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), claude?.close(), gemini?.close()]);
});

const tools = weatherTools;

/** What the upstream must have received for the second turn: the user's question, the tool call and its result. */
const cases = [
  {
    model: "openai/gpt-4o-mini", last: () => up.requests.at(-1)!.body,
    conversation: (b: any, callId: string) => {
      expect(b.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(JSON.stringify(b.messages[0].content)).toContain("Weather in Paris?");
      expect(b.messages[1].tool_calls).toEqual([expect.objectContaining({ id: callId, function: expect.objectContaining({ name: "get_weather" }) })]);
      expect(b.messages[2]).toMatchObject({ tool_call_id: callId, content: expect.stringContaining("temp") });
    },
  },
  {
    model: "anthropic/claude-sonnet-4", last: () => claude.requests.at(-1)!.body,
    conversation: (b: any, callId: string) => {
      expect(b.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
      expect(JSON.stringify(b.messages[0])).toContain("Weather in Paris?");
      expect(b.messages[1].content).toContainEqual(expect.objectContaining({ type: "tool_use", id: callId, name: "get_weather" }));
      expect(b.messages[2].content).toContainEqual(expect.objectContaining({ type: "tool_result", tool_use_id: callId }));
      expect(JSON.stringify(b.messages[2])).toContain("temp");
    },
  },
  {
    model: "google/gemini-2.5-flash", last: () => gemini.requests.at(-1)!.body,
    conversation: (b: any) => {
      expect(b.contents.map((c: any) => c.role)).toEqual(["user", "model", "user"]);
      expect(JSON.stringify(b.contents[0])).toContain("Weather in Paris?");
      expect(b.contents[1].parts).toContainEqual(expect.objectContaining({ functionCall: expect.objectContaining({ name: "get_weather" }) }));
      expect(b.contents[2].parts).toContainEqual(expect.objectContaining({ functionResponse: expect.objectContaining({ name: "get_weather" }) }));
      expect(JSON.stringify(b.contents[2])).toContain("temp");
    },
  },
];

describe.each(cases)("stored state on $model", ({ model, last, conversation }) => {
  it.each([false, true])("function-tool loop with previous_response_id (stream=%s): the upstream gets the whole rebuilt conversation", async (streamed) => {
    const call = (p: OpenAI.Responses.ResponseCreateParamsNonStreaming) => streamed ? client.responses.stream(p as never).finalResponse() : client.responses.create(p);
    const first = await call({ model, instructions: "Answer in one line.", input: "Weather in Paris?", tools, parallel_tool_calls: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc).toBeDefined();
    expect(fc.id).toMatch(/^fc_/);
    expect(first.previous_response_id).toBeNull();
    const second = await call({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) }], tools });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.id).not.toBe(first.id);
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(second.output_text.length).toBeGreaterThan(0);
    conversation(last(), fc.call_id);
    // Instructions are not inherited (as in OpenAI): only the second request's own, here none.
    expect(JSON.stringify(last())).not.toContain("Answer in one line.");
    // Stored as returned: retrieve gives the same response.
    const got = await client.responses.retrieve(second.id);
    expect(got).toMatchObject({ id: second.id, status: "completed", previous_response_id: first.id, output_text: second.output_text });
    expect(got.output.map((o) => [o.type, o.id])).toEqual(second.output.map((o) => [o.type, o.id]));
  });

  it("the same loop with store: false sending the whole input back; nothing is kept", async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await client.responses.create({ model, input, tools, parallel_tool_calls: false, store: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    input.push({ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) });
    const second = await client.responses.create({ model, input, tools, store: false });
    expect(second.output_text.length).toBeGreaterThan(0);
    expect(second.previous_response_id).toBeNull();
    conversation(last(), fc.call_id);
    for (const id of [first.id, second.id]) await expect(client.responses.retrieve(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const cont = await postJson(`${gw.baseURL}/responses`, { model, previous_response_id: first.id, input: "and then?" }, { authorization: `Bearer ${LIVE}` });
    expect(cont.status).toBe(404);
    expect(cont.json.error).toMatchObject({ code: "NOT_FOUND", param: "previous_response_id" });
  });
});

describe("reasoning across a stored tool loop", () => {
  it.each([false, true])("Anthropic with thinking (stream=%s): previous_response_id replays the signed thinking block the client was not shown", async (streamed) => {
    const model = "anthropic/claude-sonnet-4";
    const base = { model, tools, reasoning: { effort: "low" as const }, max_output_tokens: 4000 };
    const call = (p: Record<string, unknown>) => (streamed ? client.responses.stream({ ...base, ...p } as never).finalResponse() : client.responses.create({ ...base, ...p } as never)) as Promise<OpenAI.Responses.Response>;
    const first = await call({ input: "Weather in Paris?", parallel_tool_calls: false });
    const rs = first.output.find((o) => o.type === "reasoning") as OpenAI.Responses.ResponseReasoningItem;
    expect(rs).toBeDefined();
    expect(rs.encrypted_content ?? undefined).toBeUndefined(); // not shown without include
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await call({ previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }] });
    expect(second.status).toBe("completed");
    // The fake checks the thinking block leads the assistant turn and its signature is intact.
    const assistant = claude.requests.at(-1)!.body.messages[1];
    expect(assistant.content[0]).toMatchObject({ type: "thinking", signature: expect.any(String) });
    // retrieve shows it only when asked, like create.
    expect((await client.responses.retrieve(first.id)).output.find((o) => o.type === "reasoning")).not.toHaveProperty("encrypted_content");
    const full = await client.responses.retrieve(first.id, { include: ["reasoning.encrypted_content"] });
    expect((full.output.find((o) => o.type === "reasoning") as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toMatch(/^mgr1\./);
  });
});

describe("stored responses: item_reference, retrieve, delete, input_items, projects", () => {
  const model = "openai/gpt-4o-mini";

  it("item_reference items (as the Vercel AI SDK sends them) resolve to the stored output items; an unknown one is a 400", async () => {
    const first = await client.responses.create({ model, input: "Weather in Paris?", tools, parallel_tool_calls: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const auth = { authorization: `Bearer ${LIVE}` };
    const input = [{ role: "user", content: "Weather in Paris?" }, { type: "item_reference", id: fc.id }, { type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }];
    const r = await postJson(`${gw.baseURL}/responses`, { model, input, tools }, auth);
    expect(r.status).toBe(200);
    cases[0]!.conversation(up.requests.at(-1)!.body, fc.call_id);
    const bad = await postJson(`${gw.baseURL}/responses`, { model, input: [input[0], { type: "item_reference", id: "fc_unknown" }], tools }, auth);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "input[1].id" });
    // Another project cannot reference this project's items.
    const rival = await postJson(`${gw.baseURL}/responses`, { model, input, tools }, { authorization: `Bearer ${OTHER}` });
    expect(rival.status).toBe(400);
    expect(rival.json.error.param).toBe("input[1].id");
  });

  it("a streamed response is retrievable as soon as the stream has ended, as finalResponse() saw it", async () => {
    const final = await client.responses.stream({ model, input: "Hi" }).finalResponse();
    const got = await client.responses.retrieve(final.id);
    expect(got).toMatchObject({ id: final.id, status: "completed", usage: final.usage, output_text: final.output_text });
    expect(got.output.map((o) => o.id)).toEqual(final.output.map((o) => o.id));
  });

  it("delete: {id, object: response.deleted, deleted: true}; then retrieve, delete and previous_response_id are 404", async () => {
    const r = await client.responses.create({ model, input: "Hi" });
    const auth = { authorization: `Bearer ${LIVE}` };
    const del = await fetch(`${gw.baseURL}/responses/${r.id}`, { method: "DELETE", headers: auth });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: r.id, object: "response.deleted", deleted: true });
    await expect(client.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.delete(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const cont = await postJson(`${gw.baseURL}/responses`, { model, previous_response_id: r.id, input: "more" }, auth);
    expect(cont.status).toBe(404);
    // The SDK's own delete call works on a live one.
    const r2 = await client.responses.create({ model, input: "Hi" });
    await client.responses.delete(r2.id);
    await expect(client.responses.retrieve(r2.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("input_items: the whole conversation with ids, most recent first by default, paginated by the SDK", async () => {
    const r1 = await client.responses.create({ model, input: [{ role: "user", content: "one" }] });
    const r2 = await client.responses.create({ model, previous_response_id: r1.id, input: [{ role: "user", content: [{ type: "input_text", text: "two" }] }] });
    const r3 = await client.responses.create({ model, previous_response_id: r2.id, input: "three" });
    const text = (i: any) => i.type === "message" ? (typeof i.content === "string" ? i.content : i.content.map((p: any) => p.text).join("")) : i.type;
    const asc: any[] = [];
    let pages = 0;
    for await (const page of (await client.responses.inputItems.list(r3.id, { limit: 2, order: "asc" })).iterPages()) {
      pages++;
      asc.push(...page.data);
    }
    expect(pages).toBe(3);
    expect(asc.map((i) => i.type === "message" ? `${i.role}:${text(i)}` : i.type)).toEqual([
      "user:one", `assistant:${r1.output_text}`, "user:two", `assistant:${r2.output_text}`, "user:three",
    ]);
    expect(new Set(asc.map((i) => i.id)).size).toBe(5);
    expect(asc.every((i) => Array.isArray(i.content))).toBe(true); // the shape the SDK's types promise
    expect(asc[1].id).toBe(r1.output[0]!.id);
    const desc = await client.responses.inputItems.list(r3.id);
    expect(desc.data.map((i) => i.id)).toEqual(asc.map((i) => i.id).reverse());
    expect(desc.has_more).toBe(false);
    const raw = await (await fetch(`${gw.baseURL}/responses/${r3.id}/input_items?limit=1`, { headers: { authorization: `Bearer ${LIVE}` } })).json();
    expect(raw).toMatchObject({ object: "list", first_id: asc[4].id, last_id: asc[4].id, has_more: true });
    const bad = await fetch(`${gw.baseURL}/responses/${r3.id}/input_items?limit=500`, { headers: { authorization: `Bearer ${LIVE}` } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe("limit");
  });

  it("another project's response is a 404 on every route and as previous_response_id; no key is a 401", async () => {
    const r = await client.responses.create({ model, input: "Hi" });
    await expect(other.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.delete(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.inputItems.list(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const cont = await postJson(`${gw.baseURL}/responses`, { model, previous_response_id: r.id, input: "more" }, { authorization: `Bearer ${OTHER}` });
    expect(cont.status).toBe(404);
    expect(cont.json.error).toMatchObject({ code: "NOT_FOUND", param: "previous_response_id" });
    // Still there for its own project.
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    const noKey = await fetch(`${gw.baseURL}/responses/${r.id}`);
    expect(noKey.status).toBe(401);
  });

  it("openapi.json describes the three routes with their schemas and the list's query parameters", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    const one = doc.paths["/v1/responses/{id}"];
    expect(one.get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ResponseObject" });
    expect(one.delete.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ResponseDeleted" });
    const list = doc.paths["/v1/responses/{id}/input_items"].get;
    expect(list.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ResponseInputItemList" });
    expect(list.parameters.filter((p: any) => p.in === "query").map((p: any) => p.name)).toEqual(["limit", "order", "after"]);
    expect(doc.components.schemas.ResponseObject.required).toContain("output");
  });

  it("SQLite: stored responses survive a gateway restart (retrieve and previous_response_id)", async () => {
    const first = await client.responses.create({ model, input: "Weather in Paris?", tools, parallel_tool_calls: false });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    await gw.close();
    gw = await startTestGateway(config({ kind: "sqlite", path: `${gw.dir}/state/gateway.db` }));
    client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
    expect((await client.responses.retrieve(first.id)).output).toEqual(first.output);
    const second = await client.responses.create({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }], tools });
    expect(second.output_text.length).toBeGreaterThan(0);
    cases[0]!.conversation(up.requests.at(-1)!.body, fc.call_id);
  });
});

describe("retention", () => {
  it("a response is gone after store.responses_retention_days (here ~0.4 s)", async () => {
    const short = await startTestGateway(config({ kind: "memory", responses_retention_days: 0.000005 }));
    try {
      const c = new OpenAI({ apiKey: LIVE, baseURL: short.baseURL, maxRetries: 0 });
      const r = await c.responses.create({ model: "openai/gpt-4o-mini", input: "Hi" });
      expect((await c.responses.retrieve(r.id)).id).toBe(r.id);
      await new Promise((res) => setTimeout(res, 600));
      await expect(c.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const cont = await postJson(`${short.baseURL}/responses`, { model: "openai/gpt-4o-mini", previous_response_id: r.id, input: "more" }, { authorization: `Bearer ${LIVE}` });
      expect(cont.status).toBe(404);
    } finally {
      await short.close();
    }
  });
});
