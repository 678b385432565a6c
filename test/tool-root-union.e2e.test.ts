// A tool whose schema's root is a oneOf / anyOf / allOf (an MCP server's zod union, mobile-mcp's and gitlab-mcp's
// tools), offered by a chat, Responses or Gemini client to Claude: Anthropic refuses the whole request ("tools.0.custom.
// input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level", as the fake now does), so one
// such tool broke every request of the agent offering it. The gateway sends one object schema instead (the shapes said
// in its description), the model's call reaches the client as the model made it, and a JSON response_format's schema
// goes the same way. A branch that is no object is a 400 naming the client's field. A Messages client's own tools go
// to Anthropic as sent (native fidelity, DESIGN §10): Anthropic's 400 is theirs to see.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAUDE, startAnthropicAndBedrockGateway } from "./helpers/anthropic-and-bedrock-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { swipe, SWIPE, tap, TOOL, UNION } from "./helpers/mobile-union-tool.ts";
import type { FakeAnthropic } from "./upstreams/anthropic.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("tool-root-union");
const BEDROCK_CLAUDE = "aws/claude-sonnet-4.5";
const auth = { authorization: `Bearer ${KEY}` };
const ROOT_KEYS = ["oneOf", "anyOf", "allOf"];

let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ anthropic, bedrock, gw, close } = await startAnthropicAndBedrockGateway(KEY, {
    [BEDROCK_CLAUDE]: { type: "language", endpoints: [{ provider: "aws", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { input: "0.000003", output: "0.000015" } }] },
  }));
  anthropic.script = ({ tools }) => (tools.some((t) => t.name === TOOL) ? { call: { name: TOOL, input: SWIPE } } : undefined);
});
afterAll(() => close?.());

const chat = (body: Record<string, unknown>, model = CLAUDE) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "swipe up" }], ...body }, auth);
const chatTool = (parameters: unknown, model = CLAUDE) => chat({ tools: [{ type: "function", function: { name: TOOL, description: "Act on the phone screen.", parameters } }], tool_choice: "required" }, model);
const responses = (body: Record<string, unknown>) => postJson(`${gw.baseURL}/responses`, { model: CLAUDE, input: "swipe up", ...body }, auth);
const gemini = async (body: Record<string, unknown>) => {
  const res = await fetch(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, {
    method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "swipe up" }] }], ...body }),
  });
  return { status: res.status, json: await res.json() as any };
};
/** The input_schema of the first tool the last call to Anthropic offered. */
const sentSchema = () => anthropic.requests.at(-1)!.body.tools[0].input_schema;
const noRootCombinator = (schema: any) => {
  expect(schema.type).toBe("object");
  for (const k of ROOT_KEYS) expect(schema).not.toHaveProperty(k);
};

describe("a tool whose schema's root is a union reaches Claude as one object schema, and the model's call reaches the client intact", () => {
  it("chat: an MCP-like tool with a root oneOf", async () => {
    const r = await chatTool(UNION);
    expect(r.status, r.text).toBe(200);
    const [call] = r.json.choices[0].message.tool_calls;
    expect(call.function.name).toBe(TOOL);
    expect(JSON.parse(call.function.arguments)).toEqual(SWIPE);
    const schema = sentSchema();
    noRootCombinator(schema);
    expect(schema.required).toEqual(["action"]);
    expect(schema.description).toContain('{action: "swipe", direction, distance?}');
  });

  it("Responses: a function whose parameters are a typeless root anyOf", async () => {
    const r = await responses({ tools: [{ type: "function", name: TOOL, parameters: { anyOf: [tap, swipe] } }], tool_choice: "required" });
    expect(r.status, r.text).toBe(200);
    const call = r.json.output.find((o: any) => o.type === "function_call");
    expect(call.name).toBe(TOOL);
    expect(JSON.parse(call.arguments)).toEqual(SWIPE);
    noRootCombinator(sentSchema());
  });

  it("Gemini: a declaration whose parametersJsonSchema is a root oneOf", async () => {
    const r = await gemini({ tools: [{ functionDeclarations: [{ name: TOOL, parametersJsonSchema: UNION }] }], toolConfig: { functionCallingConfig: { mode: "ANY" } } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const call = r.json.candidates[0].content.parts.find((p: any) => p.functionCall).functionCall;
    expect(call).toMatchObject({ name: TOOL, args: SWIPE });
    noRootCombinator(sentSchema());
  });

  it("chat: a root allOf of objects (a zod intersection) is merged", async () => {
    const r = await chatTool({ allOf: [{ type: "object", properties: { device: { type: "string" } }, required: ["device"] }, swipe] });
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.json.choices[0].message.tool_calls[0].function.arguments)).toEqual(SWIPE);
    const schema = sentSchema();
    noRootCombinator(schema);
    expect(schema.required).toEqual(["device", "action", "direction"]);
  });

  it("chat: a root allOf of if/then (a field required in one mode) reaches Claude with the conditional at the root, not as a 400", async () => {
    const conditional = { if: { properties: { action: { const: "swipe" } } }, then: { required: ["direction"] } };
    const r = await chatTool({ ...swipe, allOf: [conditional] });
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.json.choices[0].message.tool_calls[0].function.arguments)).toEqual(SWIPE);
    const schema = sentSchema();
    noRootCombinator(schema);
    expect(schema).toMatchObject({ properties: swipe.properties, ...conditional });
  });

  it("chat to Claude on Bedrock InvokeModel: the same object schema (Bedrock passes Anthropic's refusal on)", async () => {
    const from = bedrock.requests.length;
    const r = await chatTool(UNION, BEDROCK_CLAUDE);
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.tool_calls[0].function.name).toBe(TOOL);
    const sent = bedrock.requests.slice(from);
    expect(sent.map((s) => s.action)).toEqual(["invoke"]);
    noRootCombinator(sent[0]!.body.tools[0].input_schema);
  });
});

describe("a JSON response_format's schema goes to Claude's forced tool by the same rules", () => {
  it.each([
    ["chat: no type at the root", () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: { properties: { city: { type: "string" } }, required: ["city"] } } } })],
    ["chat: type [object, null] at the root", () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: ["object", "null"], properties: { city: { type: "string" } }, required: ["city"] } } } })],
    ["chat: a root oneOf", () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: UNION } } })],
    ["Responses: a root oneOf", () => responses({ text: { format: { type: "json_schema", name: "s", schema: UNION } } })],
  ])("%s: answered in JSON", async (_, send) => {
    const r = await send();
    expect(r.status, r.text).toBe(200);
    const text = r.json.choices?.[0].message.content ?? r.json.output.find((o: any) => o.type === "message").content[0].text;
    expect(typeof JSON.parse(text)).toBe("object");
    noRootCombinator(sentSchema());
  });
});

describe("a root union with a branch that is not an object is a 400 naming the client's field, before any call", () => {
  const mixed = { anyOf: [tap, { type: "string" }] };
  it.each([
    ["chat", () => chatTool(mixed), (j: any) => j.error.details.field, "tools[0].function.parameters"],
    ["Responses", () => responses({ tools: [{ type: "function", name: TOOL, parameters: mixed }] }), (j: any) => j.error.param, "tools[0].parameters"],
    ["chat response_format", () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: mixed } } }), (j: any) => j.error.details.field, "response_format.json_schema.schema"],
  ])("%s", async (_, send, field, name) => {
    const calls = anthropic.requests.length;
    const r = await send();
    expect(r.status).toBe(400);
    expect(field(r.json)).toBe(name);
    expect(anthropic.requests.length).toBe(calls);
  });

  it("Gemini", async () => {
    const calls = anthropic.requests.length;
    const r = await gemini({ tools: [{ functionDeclarations: [{ name: TOOL, parametersJsonSchema: mixed }] }] });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain("tools[0].functionDeclarations[0].parametersJsonSchema");
    expect(anthropic.requests.length).toBe(calls);
  });
});

describe("a root union the client made costly to merge is answered at once, and no other client waits on it", () => {
  /** Each definition an anyOf of `k` $refs to the next, `levels` deep (the review's repro: 16 x 4 froze the gateway). */
  const fanOut = (levels: number, k: number) => {
    const definitions: Record<string, unknown> = {};
    for (let i = 0; i < levels; i++) definitions[`d${i}`] = { anyOf: Array.from({ length: k }, () => ({ $ref: `#/definitions/d${i + 1}` })) };
    definitions[`d${levels}`] = { type: "object", properties: { a: { type: "string" } } };
    return { type: "object", anyOf: [{ $ref: "#/definitions/d0" }], definitions };
  };

  it("unions nested past the limit: a 400 naming the field, no call made, while another client's request is served", async () => {
    const calls = anthropic.requests.length;
    const [refused, served] = await Promise.all([chatTool(fanOut(17, 2)), chatTool(UNION)]);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.code).toBe("INVALID_REQUEST");
    expect(refused.json.error.details.field).toBe("tools[0].function.parameters");
    expect(refused.json.error.message).toContain("too complex to rewrite");
    expect(served.status, served.text).toBe(200);
    expect(anthropic.requests.length).toBe(calls + 1);
  });

  it("the review's fan-out (4^16 paths through $refs) is merged, each definition once, and sent", async () => {
    const r = await chatTool(fanOut(16, 4));
    expect(r.status, r.text).toBe(200);
    const schema = sentSchema();
    noRootCombinator(schema);
    expect(schema.properties).toEqual({ a: { type: "string" } });
  });
});

describe("a Messages client's own tools go to Anthropic as sent (native fidelity)", () => {
  it("a root oneOf is not rewritten: Anthropic's 400 reaches the client", async () => {
    const r = await postJson(`${gw.url}/api/v1/messages`, { model: CLAUDE, max_tokens: 50, messages: [{ role: "user", content: "swipe up" }], tools: [{ name: TOOL, input_schema: { type: "object", ...UNION } }] },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(400);
    expect(r.text).toContain("does not support oneOf, allOf, or anyOf at the top level");
    expect(sentSchema()).toEqual({ type: "object", ...UNION });
  });
});
