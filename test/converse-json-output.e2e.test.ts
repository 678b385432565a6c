// JSON answers from Claude on Bedrock's Converse API (a provider with `bedrock_claude_api: converse`): response_format
// (chat), text.format (Responses) and responseJsonSchema (Gemini) become one forced tool whose input is the answer, as
// on Anthropic, and the client gets that JSON as its text; before, Converse dropped response_format and the client got
// prose. A schema whose root is only a $ref (Pydantic v2's recursive model) is sent as the object it points at, $defs
// kept, for the JSON answer and for a function's parameters alike (Bedrock refuses a tool schema whose root is not an
// object, as the fake does).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CONVERSE_CLAUDE as CLAUDE, startConverseClaudeGateway } from "./helpers/converse-claude-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("converse-json");
const auth = { authorization: `Bearer ${KEY}` };
const node = { type: "object", properties: { value: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["value"], title: "Node" };
const pydantic = { $defs: { Node: node }, $ref: "#/$defs/Node" };
const resolved = { ...node, $defs: { Node: node } };

let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startConverseClaudeGateway(KEY));
});
afterAll(() => close?.());

beforeEach(() => {
  bedrock.failures.length = 0;
});

/** The toolConfig the last Converse call carried. */
const sentTools = () => bedrock.requests.at(-1)!.body.toolConfig;
const jsonTool = (schema: unknown) => ({ tools: [{ toolSpec: { name: "json_output", description: expect.any(String), inputSchema: { json: schema } } }], toolChoice: { tool: { name: "json_output" } } });

describe("JSON answers from Claude on Converse", () => {
  it("chat response_format json_schema with a root $ref: Bedrock gets the forced tool with the Node object, the client its JSON", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "a tree" }], response_format: { type: "json_schema", json_schema: { name: "tree", schema: pydantic } } }, auth);
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.json.choices[0].message.content)).toMatchObject({ value: expect.any(String) });
    expect(r.json.choices[0].finish_reason).toBe("stop");
    expect(r.json.choices[0].message.tool_calls).toBeUndefined();
    expect(sentTools()).toEqual(jsonTool(resolved));
    expect(r.headers.get("x-mg-dropped-params") ?? "").not.toContain("response_format");
  });

  it("streamed: the JSON arrives as content, the stream finishes with stop", async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify({ model: CLAUDE, stream: true, messages: [{ role: "user", content: "a tree" }], response_format: { type: "json_schema", json_schema: { name: "tree", schema: pydantic } } }) });
    expect(res.status).toBe(200);
    const chunks = (await res.text()).split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(JSON.parse(content)).toMatchObject({ value: expect.any(String) });
    expect(chunks.some((c) => c.choices[0]?.delta?.tool_calls)).toBe(false);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(["stop"]);
    expect(sentTools()).toEqual(jsonTool(resolved));
  });

  it("json_object: an object schema, the answer JSON", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "JSON please" }], response_format: { type: "json_object" } }, auth);
    expect(r.status, r.text).toBe(200);
    expect(typeof JSON.parse(r.json.choices[0].message.content)).toBe("object");
    expect(sentTools()).toEqual(jsonTool({ type: "object" }));
  });

  it("Responses text.format json_schema: the same", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: CLAUDE, input: "a tree", text: { format: { type: "json_schema", name: "tree", schema: pydantic } } }, auth);
    expect(r.status, r.text).toBe(200);
    const text = r.json.output.find((o: any) => o.type === "message").content[0].text;
    expect(JSON.parse(text)).toMatchObject({ value: expect.any(String) });
    expect(sentTools()).toEqual(jsonTool(resolved));
  });

  it("a Gemini client's responseJsonSchema: the same", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "a tree" }] }], generationConfig: { responseMimeType: "application/json", responseJsonSchema: pydantic } };
    const res = await fetch(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });
    const json: any = await res.json();
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(JSON.parse(json.candidates[0].content.parts[0].text)).toMatchObject({ value: expect.any(String) });
    expect(sentTools()).toEqual(jsonTool(resolved));
  });

  it("a root $ref to something other than an object is a 400 naming the schema, before any call", async () => {
    const calls = bedrock.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "l", schema: { $defs: { L: { type: "array" } }, $ref: "#/$defs/L" } } } }, auth);
    expect(r.status).toBe(400);
    expect(r.json.error.param ?? r.json.error.details?.field).toBe("response_format.json_schema.schema");
    expect(bedrock.requests.length).toBe(calls);
  });
});

describe("a function whose parameters' root is only a $ref, on Converse", () => {
  it("is sent as the object it points at (Bedrock refuses the bare $ref), and the model's call comes back", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "grow a tree" }], tools: [{ type: "function", function: { name: "grow", parameters: pydantic } }], tool_choice: "required" }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.tool_calls[0].function.name).toBe("grow");
    expect(sentTools().tools[0].toolSpec.inputSchema.json).toEqual(resolved);
  });
});
