import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { chatToMessages } from "./index.ts";
import { continuingTurn, keptReasoning, MAX_KEPT_BYTES, recallIds, withRecalled } from "./replay.ts";

const target = { modelId: "anthropic/c", provider: "claude", upstreamModel: "claude-x", pricing: { output: "0.000015" } };
const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: "anthropic", provider: "claude" };
const detail = { type: "reasoning.text", text: "T", signature: "S", format: "anthropic-claude-v1", index: 0 };
const call = (id: string) => ({ id, type: "function", function: { name: "f", arguments: "{}" } });
/** A tool loop as runTools sends it back: the assistant turn without its reasoning. */
const loop = (assistant: Record<string, unknown> = {}) => [
  { role: "user", content: "q" },
  { role: "assistant", content: null, tool_calls: [call("toolu_1"), call("toolu_2")], ...assistant },
  { role: "tool", tool_call_id: "toolu_1", content: "a" },
  { role: "tool", tool_call_id: "toolu_2", content: "b" },
];

describe("Claude's thinking across a chat tool loop", () => {
  it("the continuing turn is the last assistant message whose calls the trailing tool results answer", () => {
    expect(continuingTurn(loop())?.tool_calls).toHaveLength(2);
    expect(continuingTurn([...loop(), { role: "assistant", content: "done" }, { role: "user", content: "next" }])).toBeUndefined();
    expect(continuingTurn([{ role: "user", content: "q" }])).toBeUndefined();
  });

  it("recall is asked for only with thinking on and a continuing turn that lacks its reasoning", () => {
    expect(recallIds({ reasoning_effort: "low", messages: loop() }, target)).toEqual(["toolu_1", "toolu_2"]);
    expect(recallIds({ messages: loop() }, target)).toEqual([]);
    expect(recallIds({ reasoning_effort: "low", messages: loop({ reasoning_details: [detail] }) }, target)).toEqual([]);
    expect(recallIds({ reasoning_effort: "low", messages: [{ role: "user", content: "q" }] }, target)).toEqual([]);
  });

  it("what was kept under any of the turn's ids goes back as its reasoning_details; anything else leaves the body alone", () => {
    const body = { messages: loop() };
    const back = withRecalled(body, new Map([["toolu_2", JSON.stringify([detail])]]));
    expect(back.messages[1].reasoning_details).toEqual([detail]);
    expect(body.messages[1]).not.toHaveProperty("reasoning_details"); // the client's body is not changed
    expect(withRecalled(body, new Map([["toolu_1", "not json"]]))).toBe(body);
    expect(withRecalled(body, new Map([["other", JSON.stringify([detail])]]))).toBe(body);
    expect(withRecalled(body, undefined)).toBe(body);
  });

  it("an answer's reasoning is kept under its first tool call, unless it is too large", () => {
    expect(keptReasoning(["toolu_1", "toolu_2"], [detail])).toEqual(["toolu_1", JSON.stringify([detail])]);
    expect(keptReasoning([], [detail])).toBeUndefined();
    expect(keptReasoning(["toolu_1"], [])).toBeUndefined();
    expect(keptReasoning(["toolu_1"], [{ ...detail, signature: "x".repeat(MAX_KEPT_BYTES) }])).toBeUndefined();
  });

  it("request: recalled reasoning is replayed first in the turn, thinking stays on", () => {
    const t = chatToMessages.request({ model: "m", reasoning_effort: "low", messages: loop() }, target, { ...opts, recalled: new Map([["toolu_1", JSON.stringify([detail])]]) });
    const body = t.body as any;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(body.messages[1].content[0]).toEqual({ type: "thinking", thinking: "T", signature: "S" });
    expect(t.dropped).toEqual([]);
  });

  it.each([
    [{ reasoning_effort: "low" }, "reasoning_effort"],
    [{ providerOptions: { claude: { reasoningEffort: "high" } } }, "providerOptions.claude.reasoningEffort"],
    [{ providerOptions: { claude: { thinkingBudget: 0.05 } } }, "providerOptions.claude.thinkingBudget"],
  ])("request: nothing to replay (%j) turns thinking off and names the knob", (knob, named) => {
    const t = chatToMessages.request({ model: "m", temperature: 0.2, messages: loop(), ...knob }, target, opts);
    const body = t.body as any;
    expect(body.thinking).toBeUndefined();
    expect(body.temperature).toBe(0.2); // the sampling thinking would have removed stays
    expect(t.dropped).toEqual([named]);
  });

  it("JSON and streamed answers keep their signed reasoning under the first tool call's id (only with thinking on)", async () => {
    const kept: [string, string][] = [];
    const keep = (id: string, value: string) => { kept.push([id, value]); };
    const on = chatToMessages.request({ model: "m", reasoning_effort: "low", messages: [{ role: "user", content: "q" }] }, target, { ...opts, keep });
    chatToMessages.response({
      id: "msg", model: "c", stop_reason: "tool_use", usage: {},
      content: [{ type: "thinking", thinking: "T", signature: "S" }, { type: "tool_use", id: "toolu_9", name: "f", input: {} }],
    }, on.state, {} as never);
    expect(kept).toEqual([["toolu_9", JSON.stringify([detail])]]);

    const ev = (type: string, p: Record<string, unknown> = {}): SseEvent => ({ event: type, data: JSON.stringify({ type, ...p }) });
    async function* upstream(): AsyncIterable<SseEvent> {
      yield ev("message_start", { message: { id: "m", model: "c", usage: { input_tokens: 1 } } });
      yield ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } });
      yield ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "T" } });
      yield ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "S" } });
      yield ev("content_block_stop", { index: 0 });
      yield ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_7", name: "f", input: {} } });
      yield ev("content_block_stop", { index: 1 });
      yield ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } });
      yield ev("message_stop");
    }
    for await (const _ of chatToMessages.stream(upstream(), on.state, {} as never)) { /* drain */ }
    expect(kept.at(-1)).toEqual(["toolu_7", JSON.stringify([detail])]);

    const off = chatToMessages.request({ model: "m", messages: [{ role: "user", content: "q" }] }, target, { ...opts, keep });
    chatToMessages.response({ id: "msg", model: "c", stop_reason: "tool_use", usage: {}, content: [{ type: "tool_use", id: "toolu_8", name: "f", input: {} }] }, off.state, {} as never);
    expect(kept).toHaveLength(2);
  });
});
