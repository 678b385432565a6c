// JSON mode (response_format) for Claude on Bedrock Converse (bedrock_claude_api: converse) after a tool loop whose
// client tool is itself called json_output, the forced tool's name, with tool_choice "none": Bedrock, like Anthropic,
// refuses a tool name sent twice (the fake does too), so the forced tool names it once and the history's other tools
// keep their placeholders. Before, toolConfig.tools held json_output twice and the request failed upstream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONVERSE_CLAUDE as CLAUDE, startConverseClaudeGateway } from "./helpers/converse-claude-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("converse-json-once");
let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startConverseClaudeGateway(KEY));
});
afterAll(() => close?.());

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const history = [
  { role: "user", content: "which city, then the weather there" },
  { role: "assistant", content: null, tool_calls: [
    { id: "call_1", type: "function", function: { name: "json_output", arguments: "{\"city\":\"Paris\"}" } },
    { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
  ] },
  { role: "tool", tool_call_id: "call_1", content: "noted" },
  { role: "tool", tool_call_id: "call_2", content: "sunny" },
  { role: "user", content: "now the city, as JSON" },
];

describe("JSON mode after a history calling a client tool named json_output", () => {
  it("Bedrock gets json_output once (the forced tool) beside the other tool's placeholder; the client gets its JSON", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, {
      model: CLAUDE, messages: history, tool_choice: "none",
      tools: [{ type: "function", function: { name: "json_output", parameters: schema } }, { type: "function", function: { name: "get_weather", parameters: schema } }],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
    }, { authorization: `Bearer ${KEY}` });
    expect(r.status, r.text).toBe(200);
    const sent = bedrock.requests.at(-1)!.body.toolConfig;
    expect(sent.tools.map((t: any) => t.toolSpec.name)).toEqual(["json_output", "get_weather"]);
    expect(sent.tools[0].toolSpec.inputSchema.json).toEqual(schema);
    expect(sent.toolChoice).toEqual({ tool: { name: "json_output" } });
    expect(JSON.parse(r.json.choices[0].message.content)).toMatchObject({ city: expect.any(String) });
  });
});
