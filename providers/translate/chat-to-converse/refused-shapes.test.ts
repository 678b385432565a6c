// What Bedrock and Claude on it refuse and a client may send: temperature beside top_p (Claude 4.5 and newer), blank
// text, a prefill ending in whitespace; and the end-user id Converse has no field for, named.
import { describe, expect, it } from "vitest";
import { chatToConverseRequest } from "./request.ts";
import { geminiToConverse } from "../gemini-to-converse/index.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const llama: Target = { modelId: "meta/llama-3.3-70b", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: { output: "0.00000072" } };
const claude: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "bedrock", upstreamModel: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" }, maxTokens: 64000 };
const opts = { cacheMarkers: true, cacheAuto: false, driverProtocol: "converse", provider: "bedrock" };
const hi = [{ role: "user", content: "x" }];
const tr = (body: any, target = claude) => chatToConverseRequest({ model: "m", ...body }, target) as { body: any; dropped: string[] };

describe("chat -> Converse: temperature and top_p together", () => {
  it("Claude gets temperature only, top_p named; other models get both", () => {
    const c = tr({ messages: hi, max_tokens: 100, temperature: 0.2, top_p: 0.9 });
    expect(c.body.inferenceConfig).toEqual({ maxTokens: 100, temperature: 0.2 });
    expect(c.dropped).toEqual(["top_p"]);
    // Also when thinking asked for is turned off (a forced tool): sampling is sent then, one knob of it.
    const forced = tr({ messages: hi, max_tokens: 5000, temperature: 0.2, top_p: 0.9, reasoning_effort: "low", tools: [{ type: "function", function: { name: "f" } }], tool_choice: "required" });
    expect(forced.body.inferenceConfig).toEqual({ maxTokens: 5000, temperature: 0.2 });
    expect(forced.dropped).toEqual(["reasoning_effort", "top_p"]);
    expect(tr({ messages: hi, max_tokens: 100, temperature: 0.2, top_p: 0.9 }, llama)).toMatchObject({ body: { inferenceConfig: { temperature: 0.2, topP: 0.9 } }, dropped: [] });
  });

  it("a Gemini client is told generationConfig.topP", () => {
    const t = geminiToConverse.request({ model: "m", contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { temperature: 0, topP: 1 } }, claude, opts);
    expect((t.body as any).inferenceConfig.topP).toBeUndefined();
    expect((t.body as any).inferenceConfig.temperature).toBe(0);
    expect(t.dropped).toEqual(["generationConfig.topP"]);
  });
});

describe("chat -> Converse: blank text and a prefill ending in whitespace", () => {
  it("whitespace-only user and assistant text is left out (Bedrock: 'The text field … is blank')", () => {
    const t = tr({ messages: [
      { role: "user", content: "a" }, { role: "assistant", content: "\n" }, { role: "user", content: [{ type: "text", text: " " }, { type: "text", text: "b" }] },
    ] }, llama);
    expect(t.body.messages).toEqual([{ role: "user", content: [{ text: "a" }, { text: "b" }] }]);
  });

  it("blank system text is left out, a marker it held named; a blank tool result holds a placeholder", () => {
    const t = tr({ messages: [
      { role: "system", content: " " }, { role: "developer", content: [{ type: "text", text: "\n", cache_control: { type: "ephemeral" } }] },
      { role: "system", content: "Be brief." }, { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: " " }] },
    ] }, llama);
    expect(t.body.system).toEqual([{ text: "Be brief." }]);
    expect(t.dropped).toEqual(["cache_control"]);
    expect(t.body.messages.at(-1).content).toEqual([{ toolResult: { toolUseId: "t1", content: [{ text: "(empty)" }] } }]);
    expect(tr({ messages: [{ role: "system", content: "\t" }, ...hi] }, llama).body.system).toBeUndefined();
  });

  it("a cache marker on a blank user part moves to the block kept before it (the same prefix); with none, it is named", () => {
    const mark = { type: "ephemeral" };
    const after = tr({ messages: [{ role: "user", content: [{ type: "text", text: "hello" }, { type: "text", text: "", cache_control: mark }] }] });
    expect(after.body.messages[0].content).toEqual([{ text: "hello" }, { cachePoint: { type: "default" } }]);
    expect(after.dropped).toEqual([]);
    // The block before it has a marker of its own (a 1h one): that one stays, the prefix is the same.
    const own = tr({ messages: [{ role: "user", content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral", ttl: "1h" } }, { type: "text", text: " ", cache_control: mark }] }] });
    expect(own.body.messages[0].content).toEqual([{ text: "hello" }, { cachePoint: { type: "default", ttl: "1h" } }]);
    expect(own.dropped).toEqual([]);
    const first = tr({ messages: [{ role: "user", content: [{ type: "text", text: "\n", cache_control: mark }, { type: "text", text: "hello" }] }] });
    expect(first.body.messages[0].content).toEqual([{ text: "hello" }]);
    expect(first.dropped).toEqual(["cache_control"]);
  });

  it("a marked blank part of a system prompt or a tool result: the block it joins carries the point", () => {
    const mark = { type: "ephemeral" };
    const sys = tr({ messages: [{ role: "system", content: [{ type: "text", text: "Long policy." }, { type: "text", text: "\n", cache_control: mark }] }, ...hi] });
    expect(sys.body.system).toEqual([{ text: "Long policy.\n\n" }, { cachePoint: { type: "default" } }]);
    expect(sys.dropped).toEqual([]);
    const call = { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] };
    const tool = tr({ tools: [{ type: "function", function: { name: "f" } }], messages: [{ role: "user", content: "q" }, call, { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: " ", cache_control: mark }] }] });
    expect(tool.body.messages.at(-1).content).toEqual([{ toolResult: { toolUseId: "t1", content: [{ text: "(empty)" }] } }, { cachePoint: { type: "default" } }]);
    expect(tool.dropped).toEqual([]);
  });

  it("a blank last user message after an assistant turn is a 400 naming it", () => {
    expect(() => tr({ messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "" }] }, llama))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "messages[2].content" }) }));
    expect(() => tr({ messages: [{ role: "user", content: "" }] })).toThrow(/no content/);
  });

  it("Claude's final assistant turn (prefill) loses its trailing whitespace", () => {
    const t = tr({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: "Answer: " }] });
    expect(t.body.messages.at(-1)).toEqual({ role: "assistant", content: [{ text: "Answer:" }] });
  });
});

describe("chat -> Converse: the end-user id", () => {
  it("user and safety_identifier have no Converse field: named", () => {
    expect(tr({ messages: hi, user: "u1", safety_identifier: "h7" }).dropped).toEqual(["user", "safety_identifier"]);
  });
});
