// JSON answers beside tools on Bedrock's Converse API, through a gateway on the shipped config shape (SQLite store,
// default pipeline, a project with a budget and rate limits):
// - Claude (bedrock_claude_api: converse): response_format together with tools was a 400, so an agent with tools and
//   a structured output (the OpenAI Agents SDK's output_type) failed on its first turn. Now the client's tools and the
//   json_output tool go together and the model must call one: the client gets its tool call, then its JSON as the
//   content, JSON answers and streams alike. With tool_choice required only the client's tools go: the model must
//   call one of theirs, and the JSON comes on a later turn whose tool_choice allows an answer.
// - Other models (here gpt-oss): response_format was dropped (named) and the client got prose. Now it is Bedrock's
//   structured outputs, outputConfig.textFormat with the schema as a JSON string, and the JSON text comes back as is.
// - A model AWS does not list for structured outputs (here Nova Pro, the fake refusing outputConfig as Bedrock does):
//   outputConfig was sent anyway and every structured-output request got Bedrock's 400. It gets no outputConfig and
//   answers, response_format named in x-mg-dropped-params, as before structured outputs.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("converse-json-tools");
const auth = { authorization: `Bearer ${KEY}` };
const CLAUDE = "t/claude-converse";
const GPT_OSS = "t/gpt-oss";
const NOVA = "t/nova-pro";
const report = { type: "object", properties: { city: { type: "string" }, summary: { type: "string" } }, required: ["city", "summary"], additionalProperties: false };
const response_format = { type: "json_schema", json_schema: { name: "weather_report", schema: report, strict: true } };
const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city.", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const ask = [{ role: "user", content: "What is the weather in Paris? Answer as a report." }];

let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  const price = { input: "0.000003", output: "0.000015" };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { aws: fakeBedrockProvider(bedrock), "aws-converse": fakeBedrockProvider(bedrock, { bedrock_claude_api: "converse" }) },
    models: {
      [CLAUDE]: { type: "language", endpoints: [{ provider: "aws-converse", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: price }] },
      [GPT_OSS]: { type: "language", endpoints: [{ provider: "aws", model: "openai.gpt-oss-120b-1:0", pricing: price }] },
      [NOVA]: { type: "language", endpoints: [{ provider: "aws", model: "us.amazon.nova-pro-v1:0", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)], budget: { usd: "100", period: "month" }, rate_limits: { rpm: 10_000, tpm: 10_000_000 } } },
  });
});
afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
});
beforeEach(() => {
  bedrock.calls.length = 0;
});

/** The fields named in x-mg-dropped-params. */
const dropped = (h: Headers) => (h.get("x-mg-dropped-params") ?? "").split(",").map((s) => s.trim()).filter(Boolean);

/** The Converse body the fake got last. */
const sent = () => bedrock.requests.at(-1)!.body;

/** A streamed chat answer folded into what a client library assembles: content, tool calls by index, finish reasons. */
async function streamed(body: Record<string, unknown>) {
  const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify({ ...body, stream: true }) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const chunks = text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const c of chunks) {
    for (const d of c.choices[0]?.delta?.tool_calls ?? []) {
      const call = (calls[d.index] ??= { arguments: "" });
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name = d.function.name;
      call.arguments += d.function?.arguments ?? "";
    }
  }
  return { content: chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), calls, finish: chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean) };
}

describe("Claude on Converse: response_format beside tools", () => {
  /** Turn 1 (the model calls get_weather) and turn 2 (after the result, it answers through json_output), JSON or streamed. */
  async function twoTurns(stream: boolean) {
    bedrock.calls.push(["get_weather"], ["json_output"]);
    const body = { model: CLAUDE, messages: ask, tools, response_format };
    let first: { content: string | null; calls: { id?: string; name?: string; arguments: string }[]; finish: string[] };
    if (stream) first = await streamed(body);
    else {
      const r = await postJson(`${gw.baseURL}/chat/completions`, body, auth);
      expect(r.status, r.text).toBe(200);
      const m = r.json.choices[0].message;
      first = { content: m.content, calls: (m.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })), finish: [r.json.choices[0].finish_reason] };
    }
    // Bedrock got the client's tool and json_output, the model made to call one of them.
    expect(sent().toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["get_weather", "json_output"]);
    expect(sent().toolConfig.toolChoice).toEqual({ any: {} });
    expect(first.calls).toEqual([{ id: expect.any(String), name: "get_weather", arguments: expect.any(String) }]);
    expect(JSON.parse(first.calls[0]!.arguments)).toMatchObject({ city: "Paris" });
    expect(first.content || null).toBeNull();
    expect(first.finish).toEqual(["tool_calls"]);

    const history = [...ask, { role: "assistant", content: null, tool_calls: [{ id: first.calls[0]!.id, type: "function", function: { name: "get_weather", arguments: first.calls[0]!.arguments } }] }, { role: "tool", tool_call_id: first.calls[0]!.id, content: "18°C, sunny" }];
    const next = { ...body, messages: history };
    if (stream) return { first, second: await streamed(next) };
    const r = await postJson(`${gw.baseURL}/chat/completions`, next, auth);
    expect(r.status, r.text).toBe(200);
    // Only strict is named (a tool is not constrained decoding), never the response_format itself.
    expect(dropped(r.headers)).toEqual(["response_format.json_schema.strict"]);
    return { first, second: { content: r.json.choices[0].message.content, calls: r.json.choices[0].message.tool_calls ?? [], finish: [r.json.choices[0].finish_reason] } };
  }

  it("JSON: a tool call first, then the report as the message content (finish stop, no tool call)", async () => {
    const { second } = await twoTurns(false);
    expect(JSON.parse(second.content!)).toEqual({ city: "Paris", summary: expect.any(String) });
    expect(second.calls).toEqual([]);
    expect(second.finish).toEqual(["stop"]);
  });

  it("streamed: the same — tool call deltas first, then the report as content deltas, finish stop", async () => {
    const { second } = await twoTurns(true);
    expect(JSON.parse(second.content!)).toEqual({ city: "Paris", summary: expect.any(String) });
    expect(second.calls).toEqual([]);
    expect(second.finish).toEqual(["stop"]);
  });

  it("tool_choice required: only the client's tools go, so the answer is a call of theirs, never the JSON", async () => {
    // After a tool result a model offered json_output would answer the report (scripted here): required forbids that.
    bedrock.calls.push(["json_output"]);
    const history = [...ask, { role: "assistant", content: null, tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }, { role: "tool", tool_call_id: "tooluse_1", content: "18°C, sunny" }];
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: history, tools, tool_choice: "required", response_format }, auth);
    expect(r.status, r.text).toBe(200);
    expect(sent().toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["get_weather"]);
    expect(sent().toolConfig.toolChoice).toEqual({ any: {} });
    const m = r.json.choices[0].message;
    expect(m.tool_calls.map((c: any) => c.function.name)).toEqual(["get_weather"]);
    expect(m.content).toBeNull();
    expect(r.json.choices[0].finish_reason).toBe("tool_calls");
  });
});

describe("a model other than Claude on Converse: response_format as outputConfig.textFormat", () => {
  const outputConfig = { textFormat: { type: "json_schema", structure: { jsonSchema: { schema: JSON.stringify(report), name: "weather_report" } } } };

  it("JSON: Bedrock gets the schema as a JSON string, the client the JSON text, nothing named dropped", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: GPT_OSS, messages: ask, response_format }, auth);
    expect(r.status, r.text).toBe(200);
    expect(sent().outputConfig).toEqual(outputConfig);
    expect(JSON.parse(r.json.choices[0].message.content)).toEqual({ city: expect.any(String), summary: expect.any(String) });
    expect(r.json.choices[0].finish_reason).toBe("stop");
    expect(dropped(r.headers)).toEqual([]);
  });

  it("streamed, beside a tool: the tools and the outputConfig both reach Bedrock, the JSON arrives as content", async () => {
    const s = await streamed({ model: GPT_OSS, messages: [...ask, { role: "assistant", content: null, tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }, { role: "tool", tool_call_id: "tooluse_1", content: "18°C, sunny" }], tools, response_format });
    expect(sent().outputConfig).toEqual(outputConfig);
    expect(sent().toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["get_weather"]);
    expect(JSON.parse(s.content)).toEqual({ city: expect.any(String), summary: expect.any(String) });
    expect(s.finish).toEqual(["stop"]);
  });
});

describe("a model AWS does not list for structured outputs: response_format dropped and named, an answer as before", () => {
  it("JSON: no outputConfig reaches Bedrock, the client gets the model's answer and response_format in x-mg-dropped-params", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: NOVA, messages: ask, response_format }, auth);
    expect(r.status, r.text).toBe(200);
    expect(sent().outputConfig).toBeUndefined();
    expect(r.json.choices[0].message.content).toEqual(expect.any(String));
    expect(dropped(r.headers)).toEqual(["response_format"]);
  });

  it("streamed, beside a tool (an agent with tools and an output_type): the tools go, the answer streams", async () => {
    const s = await streamed({ model: NOVA, messages: ask, tools, response_format });
    expect(sent().outputConfig).toBeUndefined();
    expect(sent().toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["get_weather"]);
    expect(s.finish).toHaveLength(1);
  });
});
