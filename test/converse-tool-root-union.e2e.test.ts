// A tool whose schema's root is a oneOf (an MCP server's zod union) offered by a chat client to Claude on Bedrock's
// Converse API (`bedrock_claude_api: converse`): Bedrock relays Claude's refusal of a root combinator ("input_schema
// does not support oneOf, allOf, or anyOf at the top level"), as the fake now does, which would fail the whole request.
// The gateway sends one object schema (tool-input-schema.ts), and the model's call reaches the client as made.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONVERSE_CLAUDE as CLAUDE, CONVERSE_UPSTREAM as UPSTREAM, startConverseClaudeGateway } from "./helpers/converse-claude-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { SWIPE, TOOL, UNION } from "./helpers/mobile-union-tool.ts";
import { FAKE_BEDROCK_API_KEY, type FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("converse-tool-root-union");
const auth = { authorization: `Bearer ${KEY}` };

let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startConverseClaudeGateway(KEY));
  bedrock.toolInputs[TOOL] = SWIPE;
});
afterAll(() => close?.());

const toolBody = (stream: boolean) => ({
  model: CLAUDE, stream, messages: [{ role: "user", content: "swipe up" }], tool_choice: "required",
  tools: [{ type: "function", function: { name: TOOL, description: "Act on the phone screen.", parameters: UNION } }],
});
/** The one tool schema the last Converse call offered, checked to be an object with no root combinator. */
const sentSchema = () => {
  const calls = bedrock.requests.filter((r) => r.action.startsWith("converse"));
  const schema = calls.at(-1)!.body.toolConfig.tools[0].toolSpec.inputSchema.json;
  expect(schema.type).toBe("object");
  for (const k of ["oneOf", "anyOf", "allOf"]) expect(schema).not.toHaveProperty(k);
  return schema;
};

describe("the fake Bedrock relays Claude's refusal of a root combinator on Converse", () => {
  it("a toolSpec whose inputSchema.json has a root oneOf is a 400 ValidationException", async () => {
    const res = await fetch(`${bedrock.baseUrl}/model/${encodeURIComponent(UPSTREAM)}/converse`, {
      method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` },
      body: JSON.stringify({ messages: [{ role: "user", content: [{ text: "swipe up" }] }], toolConfig: { tools: [{ toolSpec: { name: TOOL, inputSchema: { json: { type: "object", ...UNION } } } }] } }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-errortype")?.split(":")[0]).toBe("ValidationException");
    expect((await res.json() as any).message).toContain("does not support oneOf, allOf, or anyOf at the top level");
  });
});

describe("chat to Claude on Converse: a root-union tool goes as one object schema, the call reaches the client intact", () => {
  it("non-streamed", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, toolBody(false), auth);
    expect(r.status, r.text).toBe(200);
    const [call] = r.json.choices[0].message.tool_calls;
    expect(call.function.name).toBe(TOOL);
    expect(JSON.parse(call.function.arguments)).toEqual(SWIPE);
    const schema = sentSchema();
    expect(schema.required).toEqual(["action"]);
    expect(schema.description).toContain('{action: "swipe", direction, distance?}');
  });

  it("streamed", async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(toolBody(true)) });
    expect(res.status).toBe(200);
    const chunks = (await res.text()).split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(deltas.find((d: any) => d.function?.name)?.function.name).toBe(TOOL);
    expect(JSON.parse(deltas.map((d: any) => d.function?.arguments ?? "").join(""))).toEqual(SWIPE);
    sentSchema();
  });
});
