// A function tool whose parameters are not an object schema, sent by a chat, Responses or Gemini client to Claude
// (Anthropic; Bedrock Converse too): Anthropic refuses an input_schema without `type: "object"` (400 "tools.0.custom.
// input_schema.type: Field required", as the fake now does), Bedrock a toolSpec likewise. Parameters that are empty or
// leave the type out (chat's `{}`, which OpenAI takes as "no parameters"; a Gemini declaration's `{}`; a Responses
// tool's `{}`) are sent as an object schema; parameters of another type (a string, an array), which OpenAI and Gemini
// refuse too, are a 400 naming the client's own field before any call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAUDE, startAnthropicAndBedrockGateway } from "./helpers/anthropic-and-bedrock-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import type { FakeAnthropic } from "./upstreams/anthropic.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("tool-object-schema");
const LLAMA = "meta/llama-3.3-70b";
const auth = { authorization: `Bearer ${KEY}` };
const EMPTY = { type: "object", properties: {} };
const city = { city: { type: "string" } };

let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ anthropic, bedrock, gw, close } = await startAnthropicAndBedrockGateway(KEY, {
    [LLAMA]: { type: "language", endpoints: [{ provider: "aws", model: "us.meta.llama3-3-70b-instruct-v1:0", pricing: { input: "0.00000072", output: "0.00000072" } }] },
  }));
});
afterAll(() => close?.());

const chat = (model: string, parameters: unknown) => postJson(`${gw.baseURL}/chat/completions`, {
  model, messages: [{ role: "user", content: "weather?" }], tools: [{ type: "function", function: { name: "get_weather", ...(parameters === undefined ? {} : { parameters }) } }], tool_choice: "required",
}, auth);
const responses = (parameters: unknown) => postJson(`${gw.baseURL}/responses`, { model: CLAUDE, input: "weather?", tools: [{ type: "function", name: "get_weather", parameters }], tool_choice: "required" }, auth);
const gemini = async (decl: Record<string, unknown>) => {
  const body = { contents: [{ role: "user", parts: [{ text: "weather?" }] }], tools: [{ functionDeclarations: [{ name: "get_weather", ...decl }] }], toolConfig: { functionCallingConfig: { mode: "ANY" } } };
  const res = await fetch(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() as any };
};
/** The input_schema of the one tool the last call to Anthropic offered. */
const sentSchema = () => anthropic.requests.at(-1)!.body.tools[0].input_schema;

describe("parameters that are empty or leave the type out reach Claude as an object schema, and the call comes back", () => {
  it.each([
    ["chat: parameters {}", () => chat(CLAUDE, {}), EMPTY],
    ["chat: no parameters", () => chat(CLAUDE, undefined), EMPTY],
    ["chat: properties without a type", () => chat(CLAUDE, { properties: city, required: ["city"] }), { type: "object", properties: city, required: ["city"] }],
    ["chat: type [object, null]", () => chat(CLAUDE, { type: ["object", "null"], properties: city }), { type: "object", properties: city }],
    ["Responses: parameters {}", () => responses({}), EMPTY],
    ["Responses: parameters null", () => responses(null), EMPTY],
  ])("%s", async (_, send, schema) => {
    const r = await send();
    expect(r.status, r.text).toBe(200);
    const calls = r.json.choices?.[0].message.tool_calls ?? r.json.output.filter((o: any) => o.type === "function_call");
    expect(calls.map((c: any) => c.function?.name ?? c.name)).toContain("get_weather");
    expect(sentSchema()).toEqual(schema);
  });

  it.each([
    ["no parameters", {}, EMPTY],
    ["parameters {}", { parameters: {} }, EMPTY],
    ["parametersJsonSchema {}", { parametersJsonSchema: {} }, EMPTY],
    ["parameters with properties but no type", { parameters: { properties: { city: { type: "STRING" } } } }, { type: "object", properties: city }],
  ])("Gemini: %s", async (_, decl, schema) => {
    const r = await gemini(decl);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.candidates[0].content.parts.find((p: any) => p.functionCall).functionCall.name).toBe("get_weather");
    expect(sentSchema()).toEqual(schema);
  });

  it("chat to a Converse model: parameters {} go as an object schema (Bedrock refuses one without a type too)", async () => {
    const r = await chat(LLAMA, {});
    expect(r.status, r.text).toBe(200);
    expect(bedrock.requests.at(-1)!.body.toolConfig.tools[0].toolSpec.inputSchema).toEqual({ json: EMPTY });
  });
});

describe("parameters of a type other than object are a 400 naming the client's field, before any call", () => {
  it("chat: type string", async () => {
    const calls = anthropic.requests.length;
    const r = await chat(CLAUDE, { type: "string" });
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "tools[0].function.parameters" });
    expect(anthropic.requests.length).toBe(calls);
  });

  it("Responses: type array", async () => {
    const calls = anthropic.requests.length;
    const r = await responses({ type: "array", items: { type: "string" } });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe("tools[0].parameters");
    expect(anthropic.requests.length).toBe(calls);
  });

  it("Gemini: parametersJsonSchema of type string", async () => {
    const calls = anthropic.requests.length;
    const r = await gemini({ parametersJsonSchema: { type: "string" } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain("tools[0].functionDeclarations[0].parametersJsonSchema");
    expect(anthropic.requests.length).toBe(calls);
  });

  it("chat to a Converse model: the same", async () => {
    const calls = bedrock.requests.length;
    const r = await chat(LLAMA, { type: "string" });
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "tools[0].function.parameters" });
    expect(bedrock.requests.length).toBe(calls);
  });
});
