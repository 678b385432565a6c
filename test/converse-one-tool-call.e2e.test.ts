// parallel_tool_calls: false (a Messages client's disable_parallel_tool_use) has no Converse field: a model on Bedrock
// Converse may call several tools at once, as the fake does with two tools offered. The answer keeps the first call,
// JSON and streamed, as the Gemini translation does; usage stays what the upstream reported.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("converse-one-call");
const auth = { authorization: `Bearer ${LIVE}` };
const NOVA = "amazon/nova-pro";
const CONVERSE_CLAUDE = "test/claude-converse";
const price = { input: "0.000003", output: "0.000015" };
let aws: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  aws = await startFakeBedrock();
  gw = await startTestGateway({
    providers: { aws: fakeBedrockProvider(aws, { bedrock_claude_api: "converse" }) },
    models: {
      [NOVA]: { type: "language", endpoints: [{ provider: "aws", model: "us.amazon.nova-pro-v1:0", pricing: price }] },
      [CONVERSE_CLAUDE]: { type: "language", endpoints: [{ provider: "aws", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await aws?.close();
});

const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: { city: { type: "string" } } } } });
const tools = [fn("get_weather"), fn("get_time")];
const ask = { messages: [{ role: "user", content: "weather and time in Paris?" }], tools };

/** The chat chunks of a streamed answer. */
async function streamed(body: unknown): Promise<any[]> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.text()).split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
}

describe.each([NOVA, CONVERSE_CLAUDE])("parallel_tool_calls: false on Converse (%s)", (model) => {
  it("by default both calls the model made reach the client", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, ...ask }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["get_weather", "get_time"]);
  });

  it("JSON: one tool call, the first; finish_reason tool_calls; usage as reported", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, ...ask, parallel_tool_calls: false }, auth);
    expect(r.status, r.text).toBe(200);
    const calls = r.json.choices[0].message.tool_calls;
    expect(calls.map((c: any) => c.function.name)).toEqual(["get_weather"]);
    expect(JSON.parse(calls[0].function.arguments)).toEqual(expect.any(Object));
    expect(r.json.choices[0].finish_reason).toBe("tool_calls");
    expect(r.json.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("streamed: only the first call's chunks, index 0, with its arguments", async () => {
    const chunks = await streamed({ model, ...ask, parallel_tool_calls: false, stream: true, stream_options: { include_usage: true } });
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(new Set(deltas.map((d: any) => d.index))).toEqual(new Set([0]));
    expect(deltas.filter((d: any) => d.function?.name).map((d: any) => d.function.name)).toEqual(["get_weather"]);
    expect(JSON.parse(deltas.map((d: any) => d.function?.arguments ?? "").join(""))).toEqual(expect.any(Object));
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(["tool_calls"]);
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);
  });

  it("a Messages client's disable_parallel_tool_use: one tool_use block", async () => {
    const atools = tools.map((t) => ({ name: t.function.name, input_schema: t.function.parameters }));
    const r = await postJson(`${gw.baseURL}/messages`, { model, max_tokens: 256, messages: ask.messages, tools: atools, tool_choice: { type: "auto", disable_parallel_tool_use: true } }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(r.status, r.text).toBe(200);
    expect(r.json.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.name)).toEqual(["get_weather"]);
    expect(r.json.stop_reason).toBe("tool_use");
  });
});
