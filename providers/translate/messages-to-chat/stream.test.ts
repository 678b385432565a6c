import { describe, expect, it } from "vitest";
import { ChatToMessagesStream } from "./stream.ts";

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ data: JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] }) });
const usage = (u: Record<string, unknown>) => ({ data: JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [], usage: u }) });

function run(events: { data: string }[]) {
  const t = new ChatToMessagesStream({ provider: "p" });
  const out = events.flatMap((e) => t.push(e));
  return out.map((e) => ({ event: e.event, ...JSON.parse(e.data) }));
}

describe("chat chunks -> messages events", () => {
  it("reference §3.11 example: text then two parallel tool calls, usage held until the usage chunk", () => {
    const out = run([
      chunk({ role: "assistant", content: "Sure" }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "wx", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"c\":" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "\"SF\"}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "tm", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
      usage({ prompt_tokens: 50, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 10 } }),
      { data: "[DONE]" },
    ]);
    for (const e of out) expect(e.type).toBe(e.event);
    expect(out.map((e) => e.type + (e.index !== undefined ? e.index : ""))).toEqual([
      "message_start", "ping",
      "content_block_start0", "content_block_delta0", "content_block_stop0",
      "content_block_start1", "content_block_delta1", "content_block_delta1", "content_block_stop1",
      "content_block_start2", "content_block_delta2", "content_block_stop2",
      "message_delta", "message_stop",
    ]);
    expect(out[0].message).toMatchObject({ id: "msg_1", role: "assistant", content: [], stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(out[5].content_block).toEqual({ type: "tool_use", id: "call_a", name: "wx", input: {}, caller: { type: "direct" } });
    expect(out[9].content_block).toEqual({ type: "tool_use", id: "call_b", name: "tm", input: {}, caller: { type: "direct" } });
    expect(out[12]).toMatchObject({ delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { input_tokens: 40, cache_read_input_tokens: 10, output_tokens: 20 } });
  });

  it("an empty completion still gets message_start, message_delta and message_stop", () => {
    const out = run([chunk({ role: "assistant", content: "" }), chunk({}, "length"), { data: "[DONE]" }]);
    expect(out.map((e) => e.type)).toEqual(["message_start", "ping", "message_delta", "message_stop"]);
    expect(out[2].delta.stop_reason).toBe("max_tokens");
  });

  it("reasoning_content opens a thinking block before the text block", () => {
    const out = run([chunk({ role: "assistant", reasoning_content: "hmm" }), chunk({ content: "Hi" }), chunk({}, "stop"), { data: "[DONE]" }]);
    expect(out.filter((e) => e.type === "content_block_start").map((e) => [e.index, e.content_block.type])).toEqual([[0, "thinking"], [1, "text"]]);
  });

  it("an in-band error chunk throws; EOF before any finish throws; EOF after finish completes", () => {
    const t = new ChatToMessagesStream({ provider: "p" });
    expect(() => t.push({ data: JSON.stringify({ error: { message: "boom" } }) })).toThrow(/boom/);
    const cut = new ChatToMessagesStream({ provider: "p" });
    cut.push(chunk({ content: "x" }));
    expect(() => cut.end()).toThrow(/ended the stream early/);
    const ok = new ChatToMessagesStream({ provider: "p" });
    ok.push(chunk({ content: "x" }, "stop"));
    expect(ok.end().map((e) => e.event)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
  });
});
