// POST /api/v1/responses/input_tokens counts what POST /api/v1/responses would send the same target. A model whose
// create passes through to OpenAI's own /responses (native_responses: gpt-5, gpt-4.1) is counted there, at
// /v1/responses/input_tokens: hosted tools, file ids, a conversation and a previous_response_id are counted as the
// client sent them (they were refused under names the client never sent, or silently left out), and the count is
// the input a create reports. A translated model (Claude) is counted with the create's tool_choice, so a forced tool
// turns thinking off in the count as in create; an mcp tool the gateway runs is counted as the functions it offers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { weatherTools } from "./helpers/responses-fixtures.ts";

const LIVE = testKey("rsp-count-native");
const GPT5 = "openai/gpt-5";
const GPT41 = "openai/gpt-4.1";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const price = { input: "0.000001", output: "0.000002" };
let oai: FakeOpenAIWithResponses;
let ant: FakeAnthropic;
let docs: TestMcpHttpServer;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [oai, ant, docs] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic(), startMcpHttpServer("docs")]);
  gw = await startTestGateway({
    providers: {
      up: { protocol: "openai", base_url: oai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: ant.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    mcp_servers: { docs: { url: docs.url } },
    models: {
      [GPT5]: { type: "language", endpoints: [{ provider: "up", model: "gpt-5", native_responses: true, pricing: price }] },
      [GPT41]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4.1", native_responses: true, pricing: price }] },
      [CLAUDE]: { type: "language", tags: ["reasoning"], endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([oai?.close(), ant?.close(), docs?.close()]);
});

async function count(params: Record<string, unknown>) {
  const { data, response } = await client.responses.inputTokens.count(params as OpenAI.Responses.InputTokenCountParams).withResponse();
  return { data, source: response.headers.get("x-mg-token-count"), requestId: response.headers.get("x-request-id") };
}
const create = (params: Record<string, unknown>) => client.responses.create({ store: false, ...params } as never) as Promise<OpenAI.Responses.Response>;
const lastCount = () => oai.requests.filter((r) => r.path === "/v1/responses/input_tokens").at(-1)!;

describe("a native OpenAI model is counted by OpenAI's own /responses/input_tokens", () => {
  const bodies: Array<[string, Record<string, unknown>]> = [
    ["web_search", { model: GPT5, input: "Latest gateway news?", tools: [{ type: "web_search" }] }],
    ["web_search_preview", { model: GPT41, input: "Latest gateway news?", tools: [{ type: "web_search_preview" }] }],
    ["an input_file by file_id", { model: GPT41, input: [{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }, { type: "input_text", text: "Summarise it." }] }] }],
    ["a custom tool and code_interpreter", { model: GPT5, input: "Run it.", tools: [{ type: "custom", name: "shell", description: "Runs a shell command on the user's machine and answers its output" }, { type: "code_interpreter", container: { type: "auto" } }] }],
  ];

  it.each(bodies)("%s: counted as sent, equal to the input a create reports", async (_name, body) => {
    const { data, source, requestId } = await count({ ...body, tool_choice: "auto", max_output_tokens: 500 });
    const seen = lastCount();
    expect(seen.body).toEqual({ ...body, model: String(body.model).slice("openai/".length), tool_choice: "auto" });
    expect(source).toBe("upstream");
    expect(data).toMatchObject({ object: "response.input_tokens", input_tokens: (await create(body)).usage!.input_tokens });
    expect((await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId)).toEqual([]);
  });

  it("the tools count: a body with them counts more than the same body without", async () => {
    const bare = await count({ model: GPT5, input: "Run it." });
    const tooled = await count(bodies[3]![1]);
    expect(tooled.data.input_tokens).toBeGreaterThan(bare.data.input_tokens);
  });

  it("a conversation is passed to OpenAI, not refused as reached through translation", async () => {
    const { data } = await count({ model: GPT41, conversation: "conv_123", input: "And then?" });
    expect(lastCount().body).toMatchObject({ model: "gpt-4.1", conversation: "conv_123" });
    expect(data.input_tokens).toBeGreaterThan(0);
  });

  it("previous_response_id goes by id to the upstream that made it, and as the whole history once that upstream lost it", async () => {
    const first = await create({ model: GPT5, input: "Weather in Paris?", tools: weatherTools, parallel_tool_calls: false, store: true });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const next = { model: GPT5, tools: weatherTools, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "{\"temp\":21}" }] };
    const byId = await count(next);
    expect(lastCount().body).toMatchObject({ previous_response_id: first.id, input: next.input });
    expect(byId.data.input_tokens).toBe((await create(next)).usage!.input_tokens);

    oai.responses.stored.delete(first.id);
    const rebuilt = await count(next);
    const sent = lastCount().body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.map((i: { type?: string; role?: string }) => i.type ?? i.role)).toEqual(expect.arrayContaining(["function_call", "function_call_output"]));
    expect(rebuilt.data.input_tokens).toBeGreaterThan(0);
  });

  it("an upstream refusal is the client's error in the envelope, nothing counted locally", async () => {
    oai.failures.push({ kind: "status", status: 400, body: { error: { message: "Invalid 'input[0].content[0].file_id': file not found.", type: "invalid_request_error", param: "input[0].content[0].file_id", code: "invalid_value" } } });
    const err = await client.responses.inputTokens.count({ model: GPT41, input: [{ role: "user", content: [{ type: "input_file", file_id: "file-gone" }] }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain("file not found");
  });
});

describe("a native count where the upstream cannot give one as create is served", () => {
  it("a continuation whose referenced item the upstream lost is counted on the whole history, as create falls back to it", async () => {
    const first = await create({ model: GPT5, input: "Which server are you?", store: true });
    expect(first.output.map((o) => o.type)).toContain("reasoning");
    oai.responses.stored.delete(first.id);
    const next = { model: GPT5, previous_response_id: first.id, input: "more", tools: [{ type: "mcp", server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" }] };
    const { data, source } = await count(next);
    expect(source).toBe("upstream");
    const sent = lastCount().body;
    expect(sent.input.some((i: { type?: string }) => i.type === "reasoning")).toBe(false);
    expect(data.input_tokens).toBeGreaterThan(0);
    expect((await create(next)).status).toBe("completed");
  }, 30_000);

  const missing: Array<[string, { kind: "status"; status: number; body?: unknown }]> = [
    ["a 404 unknown_url", { kind: "status", status: 404, body: { error: { message: "Invalid URL (POST /v1/responses/input_tokens)", type: "invalid_request_error", param: null, code: "unknown_url" } } }],
    ["a 405", { kind: "status", status: 405, body: "Method Not Allowed" }],
  ];
  it.each(missing)("an OpenAI-compatible host without /responses/input_tokens (%s) is counted locally, the header saying so", async (_name, failure) => {
    oai.failures.push(failure);
    const body = { model: GPT5, instructions: "Be brief.", input: "What's the weather like in San Francisco?" };
    const { data, source } = await count(body);
    expect(source).toBe("tokenizer:o200k_base; the upstream has no /responses/input_tokens");
    expect(data.input_tokens).toBeGreaterThan(5);
  });

  it("any other upstream 404 of the count is still the client's error, not counted locally", async () => {
    oai.failures.push({ kind: "status", status: 404, body: { error: { message: "The model `gpt-5` does not exist or you do not have access to it.", type: "invalid_request_error", param: null, code: "model_not_found" } } });
    const err = await client.responses.inputTokens.count({ model: GPT5, input: "hi" }).catch((e) => e);
    expect(err.status).toBe(502);
  });
});

describe("a translated model is counted with what create sends it", () => {
  it("tool_choice reaches the count, so a forced tool turns Claude's thinking off there as in create", async () => {
    const body = { model: CLAUDE, instructions: "Be brief.", input: "Weather in Paris?", tools: weatherTools, tool_choice: "required", reasoning: { effort: "medium" } };
    await count(body);
    const counted = ant.requests.filter((r) => r.path === "/v1/messages/count_tokens").at(-1)!.body;
    await create({ ...body, max_output_tokens: 5000 });
    const created = ant.requests.filter((r) => r.path === "/v1/messages").at(-1)!.body;
    expect(counted.tool_choice).toEqual(created.tool_choice);
    expect(counted.tool_choice).toMatchObject({ type: "any" });
    expect(counted.thinking).toEqual(created.thinking);
    expect(counted.tools).toEqual(created.tools);
  });

  it("an mcp tool is counted as the functions create offers the model", async () => {
    const tool = { type: "mcp", server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" };
    await count({ model: CLAUDE, input: "Which server are you?", tools: [tool] });
    const counted = ant.requests.filter((r) => r.path === "/v1/messages/count_tokens").at(-1)!.body;
    expect(counted.tools.map((t: { name: string }) => t.name)).toEqual(["docs__whoami"]);
    const bare = await count({ model: CLAUDE, input: "Which server are you?" });
    const withTool = await count({ model: CLAUDE, input: "Which server are you?", tools: [tool] });
    expect(withTool.data.input_tokens).toBeGreaterThan(bare.data.input_tokens);
  }, 30_000);
});
