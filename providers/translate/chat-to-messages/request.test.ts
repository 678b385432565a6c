import { describe, expect, it } from "vitest";
import { chatToMessagesRequest } from "./request.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const target: Target = { modelId: "anthropic/c", provider: "claude", upstreamModel: "claude-x", pricing: { output: "0.000015" }, maxTokens: 8192 };
const tr = (body: any) => chatToMessagesRequest({ model: "anthropic/c", ...body }, target);

describe("chat request -> messages request", () => {
  it("hoists system and developer messages, merges consecutive tool results with the following user turn", () => {
    const { body } = tr({
      messages: [
        { role: "system", content: "A" },
        { role: "user", content: "Q" },
        { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{\"x\":1}" } }, { id: "t2", type: "function", function: { name: "g", arguments: "not json" } }] },
        { role: "tool", tool_call_id: "t1", content: "r1" },
        { role: "tool", tool_call_id: "t2", content: [{ type: "text", text: "r2" }] },
        { role: "user", content: "and?" },
        { role: "developer", content: [{ type: "text", text: "B" }] },
      ],
    });
    expect(body.system).toEqual([{ type: "text", text: "A" }, { type: "text", text: "B" }]);
    expect(body.messages).toEqual([
      { role: "user", content: "Q" },
      { role: "assistant", content: [
        { type: "tool_use", id: "t1", name: "f", input: { x: 1 } },
        { type: "tool_use", id: "t2", name: "g", input: { rawInvalidInput: "not json" } },
      ] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "t1", content: "r1" },
        { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "r2" }] },
        { type: "text", text: "and?" },
      ] },
    ]);
    expect(body.max_tokens).toBe(8192);
  });

  it("maps tools, tool_choice and parallel_tool_calls", () => {
    const tools = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {} } } }, { type: "function", function: { name: "g" } }];
    const a = tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: "required", parallel_tool_calls: false }).body;
    expect(a.tools).toEqual([{ name: "f", description: "d", input_schema: { type: "object", properties: {} } }, { name: "g", input_schema: { type: "object", properties: {} } }]);
    expect(a.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: { type: "function", function: { name: "g" } } }).body.tool_choice).toEqual({ type: "tool", name: "g" });
  });

  it("tool_choice none keeps the tools and sends {type: none}: a tool history without tools is refused by Anthropic", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const messages = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
      { role: "user", content: "summarise" },
    ];
    const { body } = tr({ messages, tools, tool_choice: "none", parallel_tool_calls: false });
    expect(body.tools).toEqual([{ name: "f", input_schema: { type: "object", properties: {} } }]);
    expect(body.tool_choice).toEqual({ type: "none" }); // disable_parallel_tool_use is not allowed on none
    const thinking = tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: "none", reasoning_effort: "low" }).body;
    expect(thinking.thinking).toBeDefined();
    expect(thinking.tool_choice).toEqual({ type: "none" }); // allowed with thinking
  });

  it("a whitespace-only stop (Anthropic refuses the whole request for one) is left out and named; the others are sent", () => {
    const one = tr({ messages: [{ role: "user", content: "hi" }], stop: "\n" });
    expect(one.body.stop_sequences).toBeUndefined();
    expect(one.dropped).toEqual(["stop"]);
    const some = tr({ messages: [{ role: "user", content: "hi" }], stop: ["\n\n", "END"] });
    expect(some.body.stop_sequences).toEqual(["END"]);
    expect(some.dropped).toEqual(["stop"]);
  });

  it("drops what Anthropic ignores and says so; refuses what it cannot honour", () => {
    expect(tr({ messages: [{ role: "user", content: "x" }], seed: 1, presence_penalty: 0.5 }).dropped).toEqual(["seed", "presence_penalty"]);
    expect(() => tr({ messages: [{ role: "user", content: "x" }], n: 3 })).toThrow(expect.objectContaining({ status: 400, details: { field: "n" } }));
    expect(() => tr({ messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "a", schema: { type: "array" } } } })).toThrow(expect.objectContaining({ details: { field: "response_format.json_schema.schema" } }));
    expect(() => tr({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/bmp;base64,AA" } }] }] })).toThrow(expect.objectContaining({ details: { field: "messages[0].content[0].image_url.url" } }));
  });

  it("image URLs: https ones go as URL sources; plain http is refused naming the field (Anthropic fetches https only)", () => {
    const img = (url: string) => ({ messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url } }] }] });
    expect((tr(img("https://img.example.com/a.png")).body.messages as any)[0].content[1]).toEqual({ type: "image", source: { type: "url", url: "https://img.example.com/a.png" } });
    expect((tr(img("https://img.example.com/a.pdf")).body.messages as any)[0].content[1]).toEqual({ type: "document", source: { type: "url", url: "https://img.example.com/a.pdf" } });
    for (const url of ["http://localhost:24444/img.png", "HTTP://img.example.com/a.pdf"]) {
      expect(() => tr(img(url)), url).toThrow(expect.objectContaining({
        status: 400, message: "messages[0].content[1].image_url.url: Anthropic fetches only https image URLs; send an https URL or a base64 data URL", details: { field: "messages[0].content[1].image_url.url", reason: "not_https" },
      }));
    }
  });

  it("PDF data URLs become document blocks; cache_control on parts and tools is kept", () => {
    const { body } = tr({ messages: [{ role: "user", content: [{ type: "file", file: { file_data: "data:application/pdf;base64,JVBER" } }, { type: "text", text: "sum", cache_control: { type: "ephemeral" } }] }] });
    expect((body.messages as any)[0].content).toEqual([
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBER" } },
      { type: "text", text: "sum", cache_control: { type: "ephemeral" } },
    ]);
  });

  it("cache_control on an assistant's text parts, and on a whole message (string content included), reaches Anthropic", () => {
    const E = { type: "ephemeral" };
    const H = { type: "ephemeral", ttl: "1h" };
    const { body, dropped } = tr({
      messages: [
        { role: "system", content: "sys", cache_control: H },
        { role: "user", content: "q", cache_control: E },
        { role: "assistant", content: [{ type: "text", text: "a", cache_control: E }] },
        { role: "user", content: [{ type: "text", text: "x" }, { type: "text", text: "y" }], cache_control: E },
        { role: "assistant", content: "b", cache_control: E },
        { role: "user", content: "z" },
      ],
    });
    expect(body.system).toEqual([{ type: "text", text: "sys", cache_control: H }]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "q", cache_control: E }] },
      { role: "assistant", content: [{ type: "text", text: "a", cache_control: E }] },
      // A message's marker marks its end: its last block.
      { role: "user", content: [{ type: "text", text: "x" }, { type: "text", text: "y", cache_control: E }] },
      { role: "assistant", content: [{ type: "text", text: "b", cache_control: E }] },
      { role: "user", content: "z" },
    ]);
    expect(dropped).toEqual([]);
  });

  it("a tool-call turn's marker goes on its last tool call; one with no block to go on is named dropped", () => {
    const E = { type: "ephemeral" };
    const call = { id: "t1", type: "function", function: { name: "f", arguments: "{}" } };
    const a = tr({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [call], cache_control: E }, { role: "tool", tool_call_id: "t1", content: "r" }] });
    expect((a.body.messages as any)[1].content).toEqual([{ type: "tool_use", id: "t1", name: "f", input: {}, cache_control: E }]);
    expect(a.dropped).toEqual([]);
    const b = tr({ messages: [{ role: "system", content: "", cache_control: E }, { role: "user", content: "q" }] });
    expect(b.dropped).toEqual(["cache_control"]);
  });

  it("thinking: effort or dollars -> a budget below the client's limit; sampling Anthropic refuses with it is dropped and named", () => {
    const hi = [{ role: "user", content: "x" }];
    const a = tr({ messages: hi, max_completion_tokens: 6000, temperature: 0.2, top_p: 0.5, reasoning_effort: "high" });
    expect(a.body).toMatchObject({ thinking: { type: "enabled", budget_tokens: 4096 }, max_tokens: 6000 });
    expect(a.body.temperature).toBeUndefined();
    expect(a.body.top_p).toBeUndefined();
    expect(a.dropped).toEqual(["temperature", "top_p"]);
    // The SDKs' defaults too (temperature 1, top_p 1): the newest models refuse the two together (reference §3.8).
    const b = tr({ messages: hi, temperature: 1, top_p: 1, reasoning_effort: "low" });
    expect(b.body).toMatchObject({ thinking: { budget_tokens: 1024 } });
    expect([b.body.temperature, b.body.top_p]).toEqual([undefined, undefined]);
    expect(b.dropped).toEqual(["temperature", "top_p"]);
    const c = tr({ messages: hi, providerOptions: { claude: { thinkingBudget: 0.06 } } }).body;
    expect(c.thinking).toEqual({ type: "enabled", budget_tokens: 4000 });
  });

  it("the client's output limit holds the thinking (as OpenAI's does): the budget is cut below it, or thinking is off", () => {
    const hi = [{ role: "user", content: "x" }];
    // max_output_tokens 20 with effort low was sent as max_tokens 1044: the answer could exceed the client's cap.
    const small = tr({ messages: hi, max_completion_tokens: 20, temperature: 0.2, reasoning_effort: "low" });
    expect(small.body.max_tokens).toBe(20);
    expect(small.body.thinking).toBeUndefined();
    expect(small.body.temperature).toBe(0.2); // thinking off: sampling is allowed again
    expect(small.dropped).toEqual(["reasoning_effort"]);
    expect(tr({ messages: hi, max_tokens: 1024, reasoning_effort: "low" }).body.thinking).toBeUndefined();
    // Room for Anthropic's minimum (budget_tokens < max_tokens): the budget shrinks to fit, the limit stays.
    const mid = tr({ messages: hi, max_completion_tokens: 3000, reasoning_effort: "high" });
    expect(mid.body).toMatchObject({ max_tokens: 3000, thinking: { budget_tokens: 2999 } });
    expect(mid.dropped).toEqual([]);
    expect(tr({ messages: hi, max_tokens: 1025, providerOptions: { claude: { thinkingBudget: 0.06 } } }).body).toMatchObject({ max_tokens: 1025, thinking: { budget_tokens: 1024 } });
    // The dollar knob is named when it is the one turned off.
    expect(tr({ messages: hi, max_tokens: 500, providerOptions: { claude: { thinkingBudget: 0.06 } } }).dropped).toEqual(["providerOptions.claude.thinkingBudget"]);
  });

  it("a forced tool or JSON mode keeps its force with thinking asked for: thinking is off and named instead", () => {
    const hi = [{ role: "user", content: "x" }];
    const tools = [{ type: "function", function: { name: "f" } }, { type: "function", function: { name: "g" } }];
    const named = tr({ messages: hi, tools, tool_choice: { type: "function", function: { name: "g" } }, temperature: 0.3, reasoning_effort: "high" });
    expect(named.body.tool_choice).toEqual({ type: "tool", name: "g" });
    expect(named.body.thinking).toBeUndefined();
    expect(named.body.temperature).toBe(0.3);
    expect(named.body.max_tokens).toBe(8192); // the model's maximum: no budget added on
    expect(named.dropped).toEqual(["reasoning_effort"]);
    const any = tr({ messages: hi, tools, tool_choice: "required", parallel_tool_calls: false, reasoning_effort: "low" });
    expect(any.body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(any.body.thinking).toBeUndefined();
    expect(any.dropped).toEqual(["reasoning_effort"]);
    const json = tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "w", schema: { type: "object" } } }, max_completion_tokens: 5000, providerOptions: { claude: { reasoningEffort: "medium" } } });
    expect(json.body.tool_choice).toEqual({ type: "tool", name: "json_output" });
    expect(json.body.thinking).toBeUndefined();
    expect(json.body.max_tokens).toBe(5000);
    expect(json.dropped).toEqual(["providerOptions.claude.reasoningEffort"]);
    // auto and none still think.
    expect(tr({ messages: hi, tools, tool_choice: "auto", reasoning_effort: "low" }).body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
  });

  it("thinking dropped for a tool loop without its thinking: max_tokens stays the client's (or the model's), no budget added", () => {
    const loop = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "ok" },
    ];
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const a = tr({ messages: loop, tools, max_tokens: 5000, reasoning_effort: "high" });
    expect(a.dropped).toEqual(["reasoning_effort"]);
    expect(a.body.thinking).toBeUndefined();
    expect(a.body.max_tokens).toBe(5000);
    const small = chatToMessagesRequest({ model: "anthropic/c", messages: loop, tools, reasoning_effort: "high" }, { ...target, maxTokens: 2048 });
    expect(small.body.thinking).toBeUndefined();
    expect(small.body.max_tokens).toBe(2048);
    // With the thinking sent, the budget is still added on.
    const sent = chatToMessagesRequest({ model: "anthropic/c", messages: [{ role: "user", content: "x" }], reasoning_effort: "high" }, { ...target, maxTokens: 2048 });
    expect(sent.body).toMatchObject({ thinking: { budget_tokens: 4096 }, max_tokens: 6144 });
  });

  it("a JSON response_format becomes one forced tool carrying the schema", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const t = tr({ messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "loc", schema } } });
    expect(t.jsonTool).toBe("json_output");
    expect(t.body.tools).toEqual([{ name: "json_output", description: expect.any(String), input_schema: schema }]);
    expect(t.body.tool_choice).toEqual({ type: "tool", name: "json_output" });
  });

  it("JSON beside the client's tools: their tools and json_output are sent, and the model must call one of them", () => {
    const hi = [{ role: "user", content: "weather in Paris, as JSON" }];
    const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] };
    const mark = { type: "ephemeral" };
    const tools = [{ type: "function", function: { name: "get_weather", description: "d", parameters: { type: "object", properties: { city: { type: "string" } } } }, cache_control: mark }];
    const rf = { type: "json_schema", json_schema: { name: "report", description: "The report.", schema } };
    const t = tr({ messages: hi, tools, response_format: rf });
    expect(t.jsonTool).toBe("json_output");
    expect(t.body.tools).toEqual([
      { name: "get_weather", description: "d", input_schema: { type: "object", properties: { city: { type: "string" } } }, cache_control: mark },
      { name: "json_output", description: "The report.", input_schema: schema },
    ]);
    expect(t.body.tool_choice).toEqual({ type: "any" });
    expect(t.dropped).toEqual([]); // the marker stays on the client's tool
    // auto alike; parallel_tool_calls: false still allows one call; json_object gives an object schema.
    expect(tr({ messages: hi, tools, tool_choice: "auto", response_format: rf }).body.tool_choice).toEqual({ type: "any" });
    const one = tr({ messages: hi, tools, tool_choice: "auto", parallel_tool_calls: false, response_format: { type: "json_object" } }).body;
    expect(one.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect((one.tools as any[])[1]).toEqual({ name: "json_output", description: expect.any(String), input_schema: { type: "object" } });
    // A forced function keeps its force (json_output is there for the turn after).
    const forced = tr({ messages: hi, tools, tool_choice: { type: "function", function: { name: "get_weather" } }, parallel_tool_calls: false, response_format: rf }).body;
    expect(forced.tool_choice).toEqual({ type: "tool", name: "get_weather", disable_parallel_tool_use: true });
    expect((forced.tools as any[]).map((x) => x.name)).toEqual(["get_weather", "json_output"]);
  });

  it("JSON beside tools with tool_choice required: only the client's tools go (the model must call one of them, not answer the JSON)", () => {
    // tool_choice required forbids an answer without a call of the client's: json_output waits for a later turn whose
    // tool_choice allows an answer (the OpenAI Agents SDK resets it after a tool call).
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
    for (const response_format of [{ type: "json_object" }, { type: "json_schema", json_schema: { name: "r", schema: { type: "object" } } }]) {
      const t = tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: "required", parallel_tool_calls: false, response_format });
      expect((t.body.tools as any[]).map((x) => x.name)).toEqual(["get_weather"]);
      expect(t.body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
      expect(t.dropped).toEqual([]);
    }
  });

  it("JSON beside tools turns thinking off as JSON mode alone does (Anthropic refuses it with a forced tool_choice), its knob named", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
    const t = tr({ messages: [{ role: "user", content: "x" }], tools, response_format: { type: "json_object" }, reasoning_effort: "high", max_completion_tokens: 5000 });
    expect(t.body.tool_choice).toEqual({ type: "any" });
    expect(t.body.thinking).toBeUndefined();
    expect(t.body.max_tokens).toBe(5000);
    expect(t.dropped).toEqual(["reasoning_effort"]);
  });

  it("JSON beside a client tool named json_output is a 400 naming tools, not a silent clash", () => {
    const tools = [{ type: "function", function: { name: "json_output", parameters: { type: "object", properties: {} } } }];
    expect(() => tr({ messages: [{ role: "user", content: "x" }], tools, response_format: { type: "json_object" } })).toThrow(expect.objectContaining({ status: 400, details: { field: "tools" } }));
    // With tool_choice none the client's tools are not sent beside it: no clash.
    expect((tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: "none", response_format: { type: "json_object" } }).body.tools as any[]).map((x) => x.name)).toEqual(["json_output"]);
  });

  it("with tool_choice none, the client's tools give way to the forced tool: a cache marker on one of them is named, not lost silently", () => {
    const mark = { type: "ephemeral" };
    const tools = [{ type: "function", function: { name: "get_weather" }, cache_control: mark }, { type: "function", function: { name: "get_time" } }];
    const t = tr({ messages: [{ role: "user", content: "x" }], tools, tool_choice: "none", response_format: { type: "json_object" } });
    expect((t.body.tools as any[]).map((x) => x.name)).toEqual(["json_output"]);
    expect(JSON.stringify(t.body.tools)).not.toContain("cache_control");
    expect(t.dropped).toEqual(["cache_control"]);
    // Without a marker on them, nothing is named.
    expect(tr({ messages: [{ role: "user", content: "x" }], tools: [tools[1]], tool_choice: "none", response_format: { type: "json_object" } }).dropped).toEqual([]);
  });

  it("a schema whose root is only a $ref to an object (Pydantic's recursive model) is sent as that object, $defs kept", () => {
    const node = { type: "object", properties: { v: { type: "string" }, child: { $ref: "#/$defs/node" } }, required: ["v"] };
    const schema = { $defs: { node }, $ref: "#/$defs/node" };
    const t = tr({ messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "tree", schema } } });
    expect((t.body.tools as any[])[0].input_schema).toEqual({ ...node, $defs: { node } });
    const tool = tr({ messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "grow", parameters: schema } }] });
    expect((tool.body.tools as any[])[0].input_schema).toEqual({ ...node, $defs: { node } });
    // A root $ref to something else than an object is still refused.
    expect(() => tr({ messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "a", schema: { $defs: { l: { type: "array" } }, $ref: "#/$defs/l" } } } })).toThrow(expect.objectContaining({ details: { field: "response_format.json_schema.schema" } }));
  });
});

describe("tool results a translator marked as failed", () => {
  it("is_error on a tool message (a Gemini client's functionResponse with only an error) reaches Anthropic as is_error", () => {
    const messages = [
      { role: "user", content: "Run it" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "sh", arguments: "{}" } }, { id: "c2", type: "function", function: { name: "sh", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "Error: Command failed", is_error: true },
      { role: "tool", tool_call_id: "c2", content: "ok" },
    ];
    const body: any = tr({ messages }).body;
    const results = body.messages.at(-1).content;
    expect(results[0]).toMatchObject({ type: "tool_result", tool_use_id: "c1", is_error: true });
    expect(results[1].is_error).toBeUndefined();
  });
});

describe("chat -> messages: prompt_cache_key", () => {
  it("Anthropic has no cache routing key or retention: both are named dropped, not sent", () => {
    const t = tr({ messages: [{ role: "user", content: "hi" }], prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" });
    expect(t.dropped).toEqual(["prompt_cache_key", "prompt_cache_retention"]);
    expect(JSON.stringify(t.body)).not.toContain("tenant-42");
  });
});

describe("a legacy functions request on Claude", () => {
  const fns = [{ name: "get_weather", parameters: { type: "object", properties: {} } }, { name: "get_time", parameters: { type: "object", properties: {} } }];
  const messages = [{ role: "user", content: "weather and time in Paris?" }];

  it("asks for one call, as legacy calling answers only one (the rest would be generated, billed and discarded)", () => {
    expect(tr({ messages, functions: fns }).body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(tr({ messages, functions: fns, function_call: { name: "get_time" } }).body.tool_choice).toEqual({ type: "tool", name: "get_time", disable_parallel_tool_use: true });
    expect(tr({ messages, functions: fns, function_call: "none" }).body.tool_choice).toEqual({ type: "none" });
  });

  it("functions beside tools answer as tool_calls, so parallel calls stay allowed", () => {
    const tools = [{ type: "function", function: { name: "get_date", parameters: { type: "object", properties: {} } } }];
    expect(tr({ messages, functions: fns, tools }).body.tool_choice).toBeUndefined();
  });
});
