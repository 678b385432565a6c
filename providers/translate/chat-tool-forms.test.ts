// Chat tool shapes an Anthropic, Gemini or Bedrock Converse model gets translated: legacy function calling,
// tool_choice allowed_tools and custom tools (chat-tool-forms.ts).
import { describe, expect, it } from "vitest";
import { chatToMessagesRequest } from "./chat-to-messages/request.ts";
import { chatToGeminiRequest } from "./chat-to-gemini/request.ts";
import { chatToConverseRequest } from "./chat-to-converse/request.ts";
import type { Target } from "../../core/contracts/provider.ts";

const target = (provider: string): Target => ({ modelId: `${provider}/m`, provider, upstreamModel: "m", pricing: { output: "0.000015" }, maxTokens: 8192 });
const params = { type: "object", properties: { city: { type: "string" } } };
const weather = { name: "get_weather", parameters: params };
const time = { name: "get_time", parameters: { type: "object", properties: {} } };

describe("legacy function calling (functions, function_call, role function)", () => {
  const body = {
    model: "m",
    functions: [weather],
    function_call: { name: "get_weather" },
    messages: [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { role: "function", name: "get_weather", content: "sunny" },
    ],
  };

  it("Anthropic: tools, a forced tool, and a tool_use / tool_result pair", () => {
    const t = chatToMessagesRequest(body, target("anthropic"));
    expect(t.body.tools).toEqual([{ name: "get_weather", input_schema: params }]);
    // A legacy request is answered with one function_call, so Claude is asked for one call (1edf8b7).
    expect(t.body.tool_choice).toEqual({ type: "tool", name: "get_weather", disable_parallel_tool_use: true });
    const [, assistant, result] = t.body.messages as any[];
    expect(assistant.content).toEqual([{ type: "tool_use", id: "call_fn1", name: "get_weather", input: { city: "Paris" } }]);
    expect(result.content).toEqual([{ type: "tool_result", tool_use_id: "call_fn1", content: "sunny" }]);
  });

  it("Gemini: functionDeclarations, the function forced, a functionCall and its functionResponse", () => {
    const t = chatToGeminiRequest(body, target("gemini")) as any;
    expect(t.body.tools[0].functionDeclarations.map((f: any) => f.name)).toEqual(["get_weather"]);
    expect(t.body.toolConfig.functionCallingConfig).toMatchObject({ mode: "ANY", allowedFunctionNames: ["get_weather"] });
    expect(t.body.contents[1].parts[0].functionCall).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
    expect(t.body.contents[2].parts[0].functionResponse).toMatchObject({ name: "get_weather" });
  });

  it("Converse: toolSpecs and a toolUse / toolResult pair", () => {
    const t = chatToConverseRequest(body, target("bedrock")) as any;
    expect(t.body.toolConfig.tools.map((x: any) => x.toolSpec.name)).toEqual(["get_weather"]);
    expect(t.body.messages[1].content[0].toolUse).toMatchObject({ toolUseId: "call_fn1", name: "get_weather" });
    expect(t.body.messages[2].content[0].toolResult).toMatchObject({ toolUseId: "call_fn1" });
  });

  it("a function message answering no call is a 400 naming it", () => {
    expect(() => chatToMessagesRequest({ model: "m", messages: [{ role: "user", content: "x" }, { role: "function", name: "f", content: "y" }] }, target("anthropic")))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "messages[1].name" }) }));
  });
});

describe("tool_choice allowed_tools and custom tools", () => {
  const tools = [{ type: "function", function: weather }, { type: "function", function: time }, { type: "custom", custom: { name: "run_sql" } }];
  const allowed = (mode: string) => ({ type: "allowed_tools", allowed_tools: { mode, tools: [{ type: "function", function: { name: "get_time" } }] } });
  const hi = [{ role: "user", content: "x" }];

  it("only the allowed tools are sent; required is any/ANY, auto is auto; the custom tool is named dropped", () => {
    const a = chatToMessagesRequest({ model: "m", messages: hi, tools, tool_choice: allowed("required") }, target("anthropic"));
    expect((a.body.tools as any[]).map((t) => t.name)).toEqual(["get_time"]);
    expect(a.body.tool_choice).toEqual({ type: "any" });
    expect(a.dropped).toEqual(["tools[2].type=custom"]);
    const g = chatToGeminiRequest({ model: "m", messages: hi, tools, tool_choice: allowed("auto") }, target("gemini")) as any;
    expect(g.body.tools[0].functionDeclarations.map((f: any) => f.name)).toEqual(["get_time"]);
    expect(g.body.toolConfig?.functionCallingConfig?.mode ?? "AUTO").toBe("AUTO");
    const r = chatToGeminiRequest({ model: "m", messages: hi, tools, tool_choice: allowed("required") }, target("gemini")) as any;
    expect(r.body.toolConfig.functionCallingConfig.mode).toBe("ANY");
  });

  it("required with no function tool allowed, or a custom tool forced, is a 400 naming the field", () => {
    const none = { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "custom", custom: { name: "run_sql" } }] } };
    expect(() => chatToMessagesRequest({ model: "m", messages: hi, tools, tool_choice: none }, target("anthropic")))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "tool_choice.allowed_tools.tools" }) }));
    expect(() => chatToConverseRequest({ model: "m", messages: hi, tools, tool_choice: { type: "custom", custom: { name: "run_sql" } } }, target("bedrock")))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "tool_choice.type" }) }));
  });

  it("tool_choice required with only custom tools is a 400 naming tool_choice, not a text answer", () => {
    const onlyCustom = { model: "m", messages: hi, tools: [tools[2]], tool_choice: "required" };
    for (const translate of [chatToMessagesRequest, chatToGeminiRequest, chatToConverseRequest]) {
      expect(() => translate(onlyCustom, target("x"))).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "tool_choice" }) }));
    }
  });
});

describe("a custom tool's call in the history", () => {
  // The next turn after a custom tool call echoes it (openai SDK ChatCompletionMessageCustomToolCall) with its result.
  const body = {
    model: "m",
    tools: [{ type: "function", function: weather }, { type: "custom", custom: { name: "run_sql" } }],
    messages: [
      { role: "user", content: "count rows, and the weather" },
      { role: "assistant", content: null, tool_calls: [
        { id: "call_sql", type: "custom", custom: { name: "run_sql", input: "select count(*) from t" } },
        { id: "call_w", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ] },
      { role: "tool", tool_call_id: "call_sql", content: "42" },
      { role: "tool", tool_call_id: "call_w", content: "sunny" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_sql2", type: "custom", custom: { name: "run_sql", input: "select 1" } }] },
      { role: "tool", tool_call_id: "call_sql2", content: "1" },
      { role: "user", content: "thanks" },
    ],
  };
  const named = ["tools[1].type=custom", "messages[1].tool_calls[0].type=custom", "messages[2]", "messages[4].tool_calls[0].type=custom", "messages[5]"];

  it("Anthropic: the custom call and its result are left out and named; the function call and its result stay", () => {
    const t = chatToMessagesRequest(body, target("anthropic"));
    expect(t.dropped).toEqual(named);
    const m = t.body.messages as any[];
    expect(m.map((x) => x.role)).toEqual(["user", "assistant", "user"]);
    expect(m[1].content).toEqual([{ type: "tool_use", id: "call_w", name: "get_weather", input: { city: "Paris" } }]);
    expect(m[2].content[0]).toEqual({ type: "tool_result", tool_use_id: "call_w", content: "sunny" });
  });

  it("Gemini and Converse alike", () => {
    const g = chatToGeminiRequest(body, target("gemini")) as any;
    expect(g.dropped).toEqual(expect.arrayContaining(named));
    expect(g.body.contents.flatMap((c: any) => c.parts.map((p: any) => p.functionCall?.name ?? p.functionResponse?.name)).filter(Boolean)).toEqual(["get_weather", "get_weather"]);
    const c = chatToConverseRequest(body, target("bedrock")) as any;
    expect(c.dropped).toEqual(expect.arrayContaining(named));
    const ids = c.body.messages.flatMap((x: any) => x.content.map((b: any) => b.toolUse?.toolUseId ?? b.toolResult?.toolUseId)).filter(Boolean);
    expect(ids).toEqual(["call_w", "call_w"]);
  });
});
