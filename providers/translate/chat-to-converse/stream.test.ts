import { describe, expect, it } from "vitest";
import { ConverseToChatStream } from "./stream.ts";
import { converseToChatResponse } from "./response.ts";
import { foldChatChoices } from "../../../test/helpers/fold-chat-chunks.ts";

const ev = (event: string, payload: unknown) => ({ event, data: JSON.stringify(payload) });
const chunks = (t: ConverseToChatStream, evs: { event: string; data: string }[]) => evs.flatMap((e) => t.push(e)).map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));

describe("ConverseStream events -> chat chunks", () => {
  it("text, a tool call in fragments, finish at messageStop, usage from metadata then [DONE]", () => {
    const t = new ConverseToChatStream({ includeUsage: true, provider: "bedrock", model: "m" });
    const out = chunks(t, [
      ev("messageStart", { role: "assistant", p: "abc" }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Let" } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: " me check." } }),
      ev("contentBlockStop", { contentBlockIndex: 0 }),
      ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_1", name: "get_weather" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"ci' } } }),
      ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: 'ty":"Paris"}' } } }),
      ev("contentBlockStop", { contentBlockIndex: 1 }),
      ev("messageStop", { stopReason: "tool_use" }),
      ev("metadata", { usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12 }, metrics: { latencyMs: 1 } }),
    ]);
    expect(out[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(out.slice(1, 3).map((c: any) => c.choices[0].delta.content)).toEqual(["Let", " me check."]);
    expect(out[3].choices[0].delta.tool_calls).toEqual([{ index: 0, id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: "" } }]);
    expect(out.slice(4, 6).map((c: any) => c.choices[0].delta.tool_calls[0].function.arguments).join("")).toBe('{"city":"Paris"}');
    expect(out[6].choices[0].finish_reason).toBe("tool_calls");
    expect(out[7].usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 7 });
    expect(out[8]).toBe("[DONE]");
    expect(t.done).toBe(true);
  });

  it("oneCall (parallel_tool_calls: false, no Converse field for it): a second tool block is left out, deltas and all", () => {
    const t = new ConverseToChatStream({ includeUsage: true, provider: "bedrock", model: "m", oneCall: true });
    const out = chunks(t, [
      ev("messageStart", { role: "assistant" }),
      ev("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_1", name: "get_weather" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: '{"city":"Paris"}' } } }),
      ev("contentBlockStop", { contentBlockIndex: 0 }),
      ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_2", name: "get_time" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":"Tokyo"}' } } }),
      ev("contentBlockStop", { contentBlockIndex: 1 }),
      ev("messageStop", { stopReason: "tool_use" }),
      ev("metadata", { usage: { inputTokens: 5, outputTokens: 9 } }),
    ]);
    const calls = out.flatMap((c: any) => c.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: "" } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    expect(out.map((c: any) => c.choices?.[0]?.finish_reason).filter(Boolean)).toEqual(["tool_calls"]);
    expect(out.at(-2).usage).toMatchObject({ completion_tokens: 9 });
  });

  it("a stream that ends without metadata: the usage chunk claims no figures (usage null), not 0 tokens", () => {
    const t = new ConverseToChatStream({ includeUsage: true, provider: "bedrock", model: "m" });
    const out = chunks(t, [
      ev("messageStart", { role: "assistant" }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Paris." } }),
      ev("messageStop", { stopReason: "end_turn" }),
    ]);
    const end = t.end().map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
    expect(out.at(-1).choices[0].finish_reason).toBe("stop");
    expect(end).toEqual([expect.objectContaining({ choices: [], usage: null }), "[DONE]"]);
  });

  it("a tool called without arguments (input \"\" or no delta) gets arguments {} at its stop, as the JSON answer has", () => {
    const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m" });
    const out = chunks(t, [
      ev("messageStart", { role: "assistant" }),
      ev("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_1", name: "get_time" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: "" } } }),
      ev("contentBlockStop", { contentBlockIndex: 0 }),
      ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_2", name: "list_files" } } }),
      ev("contentBlockStop", { contentBlockIndex: 1 }),
      ev("messageStop", { stopReason: "tool_use" }),
    ]);
    const args = new Map<number, string>();
    for (const c of out) for (const tc of c.choices?.[0]?.delta?.tool_calls ?? []) args.set(tc.index, (args.get(tc.index) ?? "") + (tc.function?.arguments ?? ""));
    expect([...args.values()].map((a) => JSON.parse(a))).toEqual([{}, {}]);
  });

  it("reasoning deltas stream as reasoning_content; the signed block goes out whole at its stop", () => {
    const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m" });
    const out = chunks(t, [
      ev("messageStart", { role: "assistant" }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Hmm" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "" } } }),
      ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "sig" } } }),
      ev("contentBlockStop", { contentBlockIndex: 0 }),
    ]);
    expect(out[1].choices[0].delta).toEqual({ reasoning_content: "Hmm" });
    expect(out[2].choices[0].delta.reasoning_details).toEqual([{ type: "reasoning.text", text: "Hmm", signature: "sig", format: "anthropic-claude-v1", index: 0 }]);
  });

  it("metadata before messageStop is tolerated; EOF without messageStop is an error", () => {
    const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m" });
    const out = chunks(t, [ev("messageStart", {}), ev("metadata", { usage: { inputTokens: 1, outputTokens: 1 } }), ev("messageStop", { stopReason: "max_tokens" })]);
    expect(out.at(-2).choices[0].finish_reason).toBe("length");
    expect(out.at(-1)).toBe("[DONE]");
    const cut = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m" });
    cut.push(ev("messageStart", {}));
    expect(() => cut.end()).toThrow(/ended the stream before messageStop/);
  });
});

describe("JSON beside tools: a stream says what the JSON answer says", () => {
  /** A Converse answer as the events that stream it (tool inputs in small string pieces). */
  const eventsOf = (c: any) => [
    ev("messageStart", { role: "assistant" }),
    ...c.output.message.content.flatMap((b: any, contentBlockIndex: number) => {
      if (typeof b.text === "string") return [ev("contentBlockDelta", { contentBlockIndex, delta: { text: b.text } }), ev("contentBlockStop", { contentBlockIndex })];
      const json = JSON.stringify(b.toolUse.input);
      const pieces = Array.from({ length: Math.ceil(json.length / 4) }, (_, k) => json.slice(k * 4, k * 4 + 4));
      return [
        ev("contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId: b.toolUse.toolUseId, name: b.toolUse.name } } }),
        ...pieces.map((input) => ev("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input } } })),
        ev("contentBlockStop", { contentBlockIndex }),
      ];
    }),
    ev("messageStop", { stopReason: c.stopReason }),
    ev("metadata", { usage: c.usage }),
  ];
  /** The chat chunks folded as a client does: content joined, tool calls by index, the finish reason. */
  const folded = (c: any) => {
    const t = new ConverseToChatStream({ includeUsage: false, provider: "bedrock", model: "m", jsonTool: "json_output" });
    return foldChatChoices(chunks(t, eventsOf(c)).filter((x) => x !== "[DONE]").map((x: any) => x.choices[0]));
  };
  const answer = (content: unknown[]) => ({ output: { message: { role: "assistant", content } }, stopReason: "tool_use", usage: { inputTokens: 10, outputTokens: 7, totalTokens: 17 } });
  const call = { toolUse: { toolUseId: "tooluse_1", name: "get_weather", input: { city: "Paris" } } };
  const json = (input: unknown) => ({ toolUse: { toolUseId: "tooluse_j", name: "json_output", input } });

  it.each([
    ["a client tool call alone", [call], { content: null, calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output alone", [json({ summary: "sunny" })], { content: "{\"summary\":\"sunny\"}", calls: [], finish: "stop" }],
    ["json_output after a client tool call", [call, json({ summary: "sunny" })], { content: "{\"summary\":\"sunny\"}", calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output before a client tool call (index counted without it)", [json({ a: 1 }), call], { content: "{\"a\":1}", calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output called twice: the first is the answer", [json({ a: 1 }), json({ a: 2 })], { content: "{\"a\":1}", calls: [], finish: "stop" }],
    ["json_output twice beside a client call", [json({ a: 1 }), call, json({ a: 2 })], { content: "{\"a\":1}", calls: ["get_weather"], finish: "tool_calls" }],
  ])("%s", (_, content, want) => {
    const c = answer(content);
    const chat: any = converseToChatResponse(c, "m", 1, "json_output");
    const m = chat.choices[0].message;
    expect({ content: m.content, calls: (m.tool_calls ?? []).map((x: any) => x.function.name), finish: chat.choices[0].finish_reason }).toEqual(want);
    expect(folded(c)).toEqual({ content: m.content, tool_calls: m.tool_calls, finish_reason: chat.choices[0].finish_reason });
  });
});

describe("the tier that served a Converse stream (metadata's serviceTier)", () => {
  const events = (metadataFirst: boolean) => {
    const metadata = ev("metadata", { usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12 }, metrics: { latencyMs: 1 }, serviceTier: { type: "flex" } });
    const stop = ev("messageStop", { stopReason: "end_turn" });
    return [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hi" } }), ev("contentBlockStop", { contentBlockIndex: 0 }), ...(metadataFirst ? [metadata, stop] : [stop, metadata])];
  };

  it("known only after the finish (metadata comes last): on the usage chunk, the chunks before it have none", () => {
    const out = chunks(new ConverseToChatStream({ includeUsage: true, provider: "bedrock", model: "m" }), events(false)).filter((c: any) => c !== "[DONE]");
    expect(out.map((c: any) => c.service_tier)).toEqual([undefined, undefined, undefined, "flex"]);
    expect(out[3].usage).toMatchObject({ prompt_tokens: 5 });
  });

  it("metadata before messageStop: the finish chunk carries it too", () => {
    const out = chunks(new ConverseToChatStream({ includeUsage: true, provider: "bedrock", model: "m" }), events(true)).filter((c: any) => c !== "[DONE]");
    expect(out.map((c: any) => c.service_tier)).toEqual([undefined, undefined, "flex", "flex"]);
  });
});
