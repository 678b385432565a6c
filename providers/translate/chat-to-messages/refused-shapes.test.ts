// What Claude refuses and a chat, Responses or Gemini client may send: temperature beside top_p, blank user text,
// a prefill ending in whitespace; and the knobs the translation cannot carry, named in x-mg-dropped-params.
import { describe, expect, it } from "vitest";
import { chatToMessagesRequest } from "./request.ts";
import { chatToMessages } from "./index.ts";
import { geminiToMessages } from "../gemini-to-messages/index.ts";
import { responsesToMessages } from "../responses-to-messages/index.ts";
import { GatewayError } from "../../../core/errors.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const sonnet: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "anthropic", upstreamModel: "claude-sonnet-4-5-20250929", pricing: { output: "0.000015" }, maxTokens: 64000 };
const opts = { cacheMarkers: true, cacheAuto: false, driverProtocol: "anthropic", provider: "anthropic" };
const tr = (body: any) => chatToMessagesRequest({ model: "m", ...body }, sonnet);
const hi = [{ role: "user", content: "x" }];

describe("temperature and top_p together (Claude 4.5 and newer: 'cannot both be specified')", () => {
  it("chat: temperature is sent, top_p is named dropped", () => {
    const t = tr({ messages: hi, temperature: 0.2, top_p: 0.9 });
    expect(t.body.temperature).toBe(0.2);
    expect(t.body.top_p).toBeUndefined();
    expect(t.dropped).toEqual(["top_p"]);
    // Either alone is sent as it is.
    expect(tr({ messages: hi, top_p: 0.9 })).toMatchObject({ body: { top_p: 0.9 }, dropped: [] });
    expect(tr({ messages: hi, temperature: 0 })).toMatchObject({ body: { temperature: 0 }, dropped: [] });
  });

  it("a Gemini client (Gemini CLI sends temperature 0 and topP 1) is told generationConfig.topP", () => {
    const t = geminiToMessages.request({ model: "m", contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { temperature: 0, topP: 1 } }, sonnet, opts);
    expect(t.body).toMatchObject({ temperature: 0 });
    expect((t.body as any).top_p).toBeUndefined();
    expect(t.dropped).toEqual(["generationConfig.topP"]);
  });

  it("a Responses client is told top_p", () => {
    const t = responsesToMessages.request({ model: "m", input: "x", temperature: 0.2, top_p: 0.9 }, sonnet, opts);
    expect(t.body).toMatchObject({ temperature: 0.2 });
    expect((t.body as any).top_p).toBeUndefined();
    expect(t.dropped).toEqual(["top_p"]);
  });
});

describe("blank user text and a prefill ending in whitespace", () => {
  it("a blank user message mid-conversation is left out; blank text parts beside other content too", () => {
    const t = tr({ messages: [
      { role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "  " },
      { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "c" }] },
    ] });
    expect(t.body.messages).toEqual([
      { role: "user", content: "a" },
      { role: "assistant", content: [{ type: "text", text: "b" }] },
      { role: "user", content: [{ type: "text", text: "c" }] },
    ]);
  });

  it("a blank last user message after an assistant turn is a 400 naming it (left out, the answer would be a continuation)", () => {
    const err = (() => { try { tr({ messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "" }] }); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, details: { field: "messages[2].content" } });
    expect(() => tr({ messages: [{ role: "system", content: "s" }, { role: "user", content: [{ type: "text", text: " " }] }] })).toThrow(/no content/);
    // After tool results the turn still holds them: nothing to refuse.
    const loop = [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "r" },
      { role: "user", content: "" },
    ];
    expect((tr({ messages: loop, tools: [{ type: "function", function: { name: "f" } }] }).body.messages as any).at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] });
  });

  it("blank system and developer text is left out ('system: text content blocks must contain non-whitespace text'), a marker it held named", () => {
    const t = tr({ messages: [
      { role: "system", content: " " }, { role: "developer", content: [{ type: "text", text: "\n" }, { type: "text", text: "Be brief." }] },
      { role: "system", content: "\t", cache_control: { type: "ephemeral" } }, { role: "user", content: "x" },
    ] });
    expect(t.body.system).toEqual([{ type: "text", text: "Be brief." }]);
    expect(t.dropped).toEqual(["cache_control"]);
    expect(tr({ messages: [{ role: "system", content: " \n" }, ...hi] }).body.system).toBeUndefined();
  });

  it("a tool result whose text is blank still answers its call, with no content; an error result with a placeholder", () => {
    const call = { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] };
    const tools = [{ type: "function", function: { name: "f" } }];
    const result = (tool: Record<string, unknown>) => (tr({ tools, messages: [{ role: "user", content: "q" }, call, { role: "tool", tool_call_id: "t1", ...tool }] }).body.messages as any).at(-1).content;
    expect(result({ content: [{ type: "text", text: " " }] })).toEqual([{ type: "tool_result", tool_use_id: "t1" }]);
    expect(result({ content: "\n" })).toEqual([{ type: "tool_result", tool_use_id: "t1" }]);
    expect(result({ content: [{ type: "text", text: "" }, { type: "text", text: "ok" }] })).toEqual([{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "ok" }] }]);
    // Anthropic: "content cannot be empty if `is_error` is true".
    expect(result({ content: " ", is_error: true })).toEqual([{ type: "tool_result", tool_use_id: "t1", content: "(empty)", is_error: true }]);
  });

  it("a cache marker on a blank part moves to the block kept before it (the same prefix); with none, the result block takes it or it is named", () => {
    const mark = { type: "ephemeral" };
    const sys = tr({ messages: [{ role: "system", content: [{ type: "text", text: "Long policy." }, { type: "text", text: "\n", cache_control: mark }] }, ...hi] });
    expect(sys.body.system).toEqual([{ type: "text", text: "Long policy.", cache_control: mark }]);
    expect(sys.dropped).toEqual([]);
    const first = tr({ messages: [{ role: "system", content: [{ type: "text", text: " ", cache_control: mark }, { type: "text", text: "Rules." }] }, ...hi] });
    expect(first.body.system).toEqual([{ type: "text", text: "Rules." }]);
    expect(first.dropped).toEqual(["cache_control"]);
    const user = tr({ messages: [{ role: "user", content: [{ type: "text", text: "Question" }, { type: "text", text: " ", cache_control: mark }] }] });
    expect((user.body.messages as any)[0].content).toEqual([{ type: "text", text: "Question", cache_control: mark }]);
    const call = { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] };
    const tool = tr({ tools: [{ type: "function", function: { name: "f" } }], messages: [{ role: "user", content: "q" }, call, { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: "\n", cache_control: mark }] }] });
    expect((tool.body.messages as any).at(-1).content).toEqual([{ type: "tool_result", tool_use_id: "t1", cache_control: mark }]);
    expect(tool.dropped).toEqual([]);
  });

  it("a Responses client's blank instructions and blank function_call_output", () => {
    const t = responsesToMessages.request({ model: "m", instructions: "\n", input: [
      { type: "message", role: "user", content: "q" },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: " " },
    ], tools: [{ type: "function", name: "f", parameters: { type: "object" } }] }, sonnet, opts);
    const body = t.body as any;
    expect(body.system).toBeUndefined();
    expect(body.messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "c1" }] });
  });

  it("a Gemini client's blank systemInstruction", () => {
    const t = geminiToMessages.request({ model: "m", systemInstruction: { parts: [{ text: " \n" }] }, contents: [{ role: "user", parts: [{ text: "x" }] }] }, sonnet, opts);
    expect((t.body as any).system).toBeUndefined();
  });

  it("a final assistant turn (prefill) loses its trailing whitespace; earlier assistant turns keep theirs", () => {
    const t = tr({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: "one \n" }, { role: "user", content: "r" }, { role: "assistant", content: "Answer: " }] });
    expect(t.body.messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "text", text: "one \n" }] },
      { role: "user", content: "r" },
      { role: "assistant", content: [{ type: "text", text: "Answer:" }] },
    ]);
    // A whitespace-only prefill is no prefill.
    expect(tr({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: " " }] }).body.messages).toEqual([{ role: "user", content: "q" }]);
  });
});

describe("knobs a chat client sends that Anthropic cannot carry are named", () => {
  it("safety_identifier becomes metadata.user_id without `user`, and is named beside it", () => {
    expect(tr({ messages: hi, safety_identifier: "hashed-7" })).toMatchObject({ body: { metadata: { user_id: "hashed-7" } }, dropped: [] });
    expect(tr({ messages: hi, user: "u1", safety_identifier: "hashed-7" })).toMatchObject({ body: { metadata: { user_id: "u1" } }, dropped: ["safety_identifier"] });
  });

  it("service_tier is named", () => {
    const t = tr({ messages: hi, service_tier: "auto" });
    expect(t.dropped).toEqual(["service_tier"]);
    expect(t.body.service_tier).toBeUndefined();
  });

  it("a strict json_schema is named (the forced tool does not enforce it), as text.format.strict to a Responses client", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false };
    expect(tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "o", strict: true, schema } } }).dropped).toEqual(["response_format.json_schema.strict"]);
    expect(tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "o", strict: false, schema } } }).dropped).toEqual([]);
    const r = responsesToMessages.request({ model: "m", input: "x", text: { format: { type: "json_schema", name: "o", strict: true, schema } } }, sonnet, opts);
    expect(r.dropped).toEqual(["text.format.strict"]);
  });

  it("the chat translator reports them in its result", () => {
    expect(chatToMessages.request({ model: "m", messages: hi, temperature: 1, top_p: 1, service_tier: "auto" }, sonnet, opts).dropped).toEqual(["service_tier", "top_p"]);
  });
});

describe("an assistant turn that was a refusal", () => {
  it("its refusal part (or refusal field with no content) goes to Anthropic as the turn's text, not dropped", () => {
    const refusal = "I can't help with that.";
    for (const assistant of [{ role: "assistant", content: [{ type: "refusal", refusal }] }, { role: "assistant", content: null, refusal }]) {
      const t = tr({ messages: [{ role: "user", content: "x" }, assistant, { role: "user", content: "why?" }] });
      expect((t.body.messages as any[])[1]).toEqual({ role: "assistant", content: [{ type: "text", text: refusal }] });
    }
  });
});
