// response_format on Converse: Claude gets a tool whose input is the answer (as on Anthropic), forced alone or, beside
// the client's tools, one of the tools the model must call; the answer comes back as the message content. Other
// families get Bedrock's structured outputs (outputConfig.textFormat, output-config.test.ts).
import { describe, expect, it } from "vitest";
import { chatToConverseRequest } from "./request.ts";
import { converseToChatResponse } from "./response.ts";
import { ConverseToChatStream } from "./stream.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const llama: Target = { modelId: "meta/llama-3.3-70b", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: { output: "0.00000072" } };
const claude: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "bedrock", upstreamModel: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" }, maxTokens: 64000 };
const hi = [{ role: "user", content: "x" }];
const tr = (body: any, target = claude) => chatToConverseRequest({ model: "m", ...body }, target) as { body: any; dropped: string[]; jsonTool?: string };
const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
const jsonSchema = (s: unknown, extra: Record<string, unknown> = {}) => ({ type: "json_schema", json_schema: { name: "out", schema: s, ...extra } });

describe("chat -> Converse: response_format", () => {
  it("Claude: one forced json_output tool carrying the schema; a strict schema is named (not enforced)", () => {
    const t = tr({ messages: hi, response_format: jsonSchema(schema, { strict: true, description: "The count." }) });
    expect(t.body.toolConfig).toEqual({ tools: [{ toolSpec: { name: "json_output", description: "The count.", inputSchema: { json: schema } } }], toolChoice: { tool: { name: "json_output" } } });
    expect(t.jsonTool).toBe("json_output");
    expect(t.dropped).toEqual(["response_format.json_schema.strict"]);
    expect(tr({ messages: hi, response_format: { type: "json_object" } }).body.toolConfig.tools[0].toolSpec.inputSchema).toEqual({ json: { type: "object" } });
  });

  it("Claude: a root that is only a $ref is sent as its object, $defs kept; a root that is no object is a 400 naming the schema", () => {
    const node = { type: "object", properties: { child: { $ref: "#/$defs/Node" } } };
    const t = tr({ messages: hi, response_format: jsonSchema({ $defs: { Node: node }, $ref: "#/$defs/Node" }) });
    expect(t.body.toolConfig.tools[0].toolSpec.inputSchema.json).toEqual({ ...node, $defs: { Node: node } });
    expect(() => tr({ messages: hi, response_format: jsonSchema({ $defs: { L: { type: "array" } }, $ref: "#/$defs/L" }) }))
      .toThrow(expect.objectContaining({ status: 400, details: { field: "response_format.json_schema.schema" } }));
  });

  it("Claude: a schema with no type, a nullable object or a root union is sent as one object schema, as on Anthropic", () => {
    const city = { city: { type: "string" } };
    const sent = (s: unknown) => tr({ messages: hi, response_format: jsonSchema(s) }).body.toolConfig.tools[0].toolSpec.inputSchema.json;
    expect(sent({ properties: city })).toEqual({ type: "object", properties: city });
    expect(sent({ type: ["object", "null"], properties: city })).toEqual({ type: "object", properties: city });
    const hot = { type: "object", properties: { city: { type: "string" }, hot: { type: "boolean" } }, required: ["city", "hot"] };
    const cold = { type: "object", properties: { city: { type: "string" }, cold: { type: "boolean" } }, required: ["city"] };
    const union = sent({ anyOf: [hot, cold] });
    expect(union).toMatchObject({ type: "object", required: ["city"] });
    for (const k of ["oneOf", "anyOf", "allOf"]) expect(union).not.toHaveProperty(k);
    expect(() => tr({ messages: hi, response_format: jsonSchema({ anyOf: [hot, { type: "string" }] }) }))
      .toThrow(expect.objectContaining({ status: 400, details: { field: "response_format.json_schema.schema" } }));
  });

  it("Claude: with tools offered, the client's tools and json_output go, and the model must call one of them", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: schema } }];
    for (const tool_choice of [undefined, "auto"]) {
      const t = tr({ messages: hi, tools, tool_choice, response_format: jsonSchema(schema) });
      expect(t.body.toolConfig).toEqual({
        tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: schema } } }, { toolSpec: { name: "json_output", description: expect.any(String), inputSchema: { json: schema } } }],
        toolChoice: { any: {} },
      });
      expect(t.jsonTool).toBe("json_output");
      expect(t.dropped).toEqual([]);
    }
    // A client's forced function stays forced; json_output is still offered (its answer on a later turn).
    const forced = tr({ messages: hi, tools, tool_choice: { type: "function", function: { name: "get_weather" } }, response_format: { type: "json_object" } });
    expect(forced.body.toolConfig.tools.map((b: any) => b.toolSpec.name)).toEqual(["get_weather", "json_output"]);
    expect(forced.body.toolConfig.toolChoice).toEqual({ tool: { name: "get_weather" } });
  });

  it("Claude: tool_choice required beside response_format: only the client's tools go, one of them must be called", () => {
    // required forbids an answer without a call of the client's: json_output waits for a later turn whose tool_choice
    // allows an answer (the OpenAI Agents SDK resets it after a tool call).
    const tools = [{ type: "function", function: { name: "get_weather", parameters: schema } }];
    for (const response_format of [jsonSchema(schema), { type: "json_object" }]) {
      const t = tr({ messages: hi, tools, tool_choice: "required", response_format });
      expect(t.body.toolConfig).toEqual({ tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: schema } } }], toolChoice: { any: {} } });
      expect(t.dropped).toEqual([]);
    }
  });

  it("Claude: a client tool already named json_output beside response_format is a 400 naming tools", () => {
    const tools = [{ type: "function", function: { name: "json_output", parameters: schema } }];
    expect(() => tr({ messages: hi, tools, response_format: { type: "json_object" } })).toThrow(expect.objectContaining({ status: 400, details: { field: "tools" } }));
  });

  it("Claude: thinking beside tools and JSON is turned off and named, as with JSON alone (the model must call a tool)", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: schema } }];
    const t = tr({ messages: hi, tools, max_tokens: 5000, reasoning_effort: "low", response_format: { type: "json_object" } });
    expect(t.body.additionalModelRequestFields).toBeUndefined();
    expect(t.body.toolConfig.toolChoice).toEqual({ any: {} });
    expect(t.dropped).toEqual(["reasoning_effort"]);
  });

  it("Claude: with tool_choice none, a tool history keeps its placeholders beside the forced tool", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: schema } }];
    const history = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "tooluse_1", content: "sunny" },
    ];
    const t = tr({ messages: history, tools, tool_choice: "none", response_format: { type: "json_object" } });
    expect(t.body.toolConfig.tools.map((b: any) => b.toolSpec.name)).toEqual(["json_output", "get_weather"]);
    expect(t.body.toolConfig.toolChoice).toEqual({ tool: { name: "json_output" } });
    expect(t.dropped).toEqual([]);
  });

  it("Claude: a history calling a client tool named json_output names it once, the forced tool's (Bedrock refuses a name twice)", () => {
    const mark = { type: "ephemeral" };
    const tools = [{ type: "function", function: { name: "json_output", parameters: schema }, cache_control: mark }, { type: "function", function: { name: "get_weather" } }];
    const history = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "tooluse_1", type: "function", function: { name: "json_output", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "tooluse_1", content: "sunny" },
    ];
    const t = tr({ messages: history, tools, tool_choice: "none", response_format: jsonSchema(schema) });
    expect(t.body.toolConfig.tools).toEqual([
      { toolSpec: { name: "json_output", description: expect.any(String), inputSchema: { json: schema } } },
      { toolSpec: { name: "get_weather", description: "A tool used earlier in this conversation.", inputSchema: { json: { type: "object", properties: {} } } } },
    ]);
    expect(t.body.toolConfig.toolChoice).toEqual({ tool: { name: "json_output" } });
    // The client's marker on its json_output tool has no placeholder left to follow: named.
    expect(t.dropped).toEqual(["cache_control"]);
    // With no tools offered, the history's names: json_output once.
    const bare = tr({ messages: history, response_format: { type: "json_object" } });
    expect(bare.body.toolConfig.tools.map((b: any) => b.toolSpec.name)).toEqual(["json_output"]);
    expect(bare.dropped).toEqual([]);
  });

  it("Claude: thinking asked for is turned off and named, as for any forced tool", () => {
    const t = tr({ messages: hi, max_tokens: 5000, reasoning_effort: "low", response_format: { type: "json_object" } });
    expect(t.body.additionalModelRequestFields).toBeUndefined();
    expect(t.dropped).toEqual(["reasoning_effort"]);
  });

  it("other families: no json_output tool (outputConfig instead); a text format is no ask at all", () => {
    const t = tr({ messages: hi, response_format: jsonSchema(schema) }, llama);
    expect(t.body.toolConfig).toBeUndefined();
    expect(t.jsonTool).toBeUndefined();
    expect(tr({ messages: hi, response_format: { type: "text" } }).dropped).toEqual([]);
  });
});

describe("Converse answer in JSON mode -> chat", () => {
  it("the forced tool's input is the content, finish_reason stop", () => {
    const r: any = converseToChatResponse({ output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_1", name: "json_output", input: { n: 3 } } }] } }, stopReason: "tool_use", usage: {} }, "m", 0, "json_output");
    expect(r.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: '{"n":3}' } });
    expect(r.choices[0].message.tool_calls).toBeUndefined();
  });

  it("beside a client's tool call: the call stays a tool call, json_output's input is the content, finish_reason tool_calls", () => {
    const content = [{ toolUse: { toolUseId: "tooluse_j", name: "json_output", input: { n: 3 } } }, { toolUse: { toolUseId: "tooluse_w", name: "get_weather", input: { city: "Paris" } } }];
    const r: any = converseToChatResponse({ output: { message: { role: "assistant", content } }, stopReason: "tool_use", usage: {} }, "m", 0, "json_output");
    expect(r.choices[0].finish_reason).toBe("tool_calls");
    expect(r.choices[0].message.content).toBe('{"n":3}');
    expect(r.choices[0].message.tool_calls).toEqual([{ id: "tooluse_w", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
  });

  it("streamed: the input fragments are content (an empty input is {}), the tool_use stop is stop", () => {
    const ev = (event: string, payload: unknown) => ({ event, data: JSON.stringify(payload) });
    const run = (deltas: string[]) => {
      const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m", jsonTool: "json_output" });
      return [
        ev("messageStart", { role: "assistant" }),
        ev("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_1", name: "json_output" } } }),
        ...deltas.map((input) => ev("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input } } })),
        ev("contentBlockStop", { contentBlockIndex: 0 }),
        ev("messageStop", { stopReason: "tool_use" }),
        ev("metadata", { usage: {} }),
      ].flatMap((e) => t.push(e)).filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]);
    };
    const out = run(['{"n"', ":3}"]);
    expect(out.map((c) => c.delta.content ?? "").join("")).toBe('{"n":3}');
    expect(out.some((c) => c.delta.tool_calls)).toBe(false);
    expect(out.at(-1)!.finish_reason).toBe("stop");
    expect(run([""]).map((c) => c.delta.content ?? "").join("")).toBe("{}");
  });

  it("streamed beside a client's tool call: the same answer as the JSON one (call indexed without json_output, content the JSON)", () => {
    const ev = (event: string, payload: unknown) => ({ event, data: JSON.stringify(payload) });
    const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m", jsonTool: "json_output" });
    const out = [
      ev("messageStart", { role: "assistant" }),
      ev("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_j", name: "json_output" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: '{"n"' } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: ":3}" } } }),
      ev("contentBlockStop", { contentBlockIndex: 0 }),
      ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_w", name: "get_weather" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":"Paris"}' } } }),
      ev("contentBlockStop", { contentBlockIndex: 1 }),
      ev("messageStop", { stopReason: "tool_use" }),
      ev("metadata", { usage: {} }),
    ].flatMap((e) => t.push(e)).filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]);
    expect(out.map((c) => c.delta.content ?? "").join("")).toBe('{"n":3}');
    const calls = out.flatMap((c) => c.delta.tool_calls ?? []);
    expect(calls.map((c: any) => c.index)).toEqual([0, 0]);
    expect(calls[0]).toMatchObject({ id: "tooluse_w", function: { name: "get_weather" } });
    expect(calls.map((c: any) => c.function.arguments).join("")).toBe('{"city":"Paris"}');
    expect(out.map((c) => c.finish_reason).filter(Boolean)).toEqual(["tool_calls"]);
  });
});
