import { describe, expect, it } from "vitest";
import { replayedThinking, reasoningDetail } from "./reasoning.ts";
import { chatToMessagesRequest } from "./request.ts";
import { messagesToChatResponse } from "./response.ts";

const target = { modelId: "anthropic/c", provider: "claude", upstreamModel: "claude-x", pricing: {} };

describe("reasoning on the chat side", () => {
  it("a response's thinking comes out in all three conventions and goes back as the same blocks", () => {
    const res: any = messagesToChatResponse({
      id: "m", model: "c", stop_reason: "tool_use", usage: {},
      content: [
        { type: "thinking", thinking: "T", signature: "S" },
        { type: "redacted_thinking", data: "D" },
        { type: "tool_use", id: "tu", name: "f", input: {} },
      ],
    });
    const m = res.choices[0].message;
    expect(m.reasoning_content).toBe("T");
    expect(m.reasoning_details).toEqual([
      { type: "reasoning.text", text: "T", signature: "S", format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.encrypted", data: "D", format: "anthropic-claude-v1", index: 1 },
    ]);
    const { body } = chatToMessagesRequest({ messages: [{ role: "user", content: "q" }, m, { role: "tool", tool_call_id: "tu", content: "r" }] }, target);
    expect((body.messages as any)[1].content).toEqual([
      { type: "thinking", thinking: "T", signature: "S" },
      { type: "redacted_thinking", data: "D" },
      { type: "tool_use", id: "tu", name: "f", input: {} },
    ]);
  });

  it("OpenRouter-style pieces with one index are joined; foreign formats and unsigned text are dropped", () => {
    expect(replayedThinking({ reasoning_details: [
      { type: "reasoning.text", text: "Let ", index: 0, format: "anthropic-claude-v1" },
      { type: "reasoning.text", text: "me", index: 0, format: "anthropic-claude-v1" },
      { type: "reasoning.text", text: "", signature: "S", index: 0, format: "anthropic-claude-v1" },
      { type: "reasoning.encrypted", data: "gpt", index: 1, format: "openai-responses-v1" },
      { type: "reasoning.text", text: "unsigned", index: 2 },
    ] })).toEqual([{ type: "thinking", thinking: "Let me", signature: "S" }]);
  });

  it("two answers' blocks numbered from 0 each stay two blocks, each with its own signature, in order", () => {
    // A Responses client sending back two reasoning items in one turn: each item's details start at index 0.
    const a = reasoningDetail({ type: "thinking", thinking: "first", signature: "SA" }, 0);
    const b = reasoningDetail({ type: "thinking", thinking: "second", signature: "SB" }, 0);
    const ra = reasoningDetail({ type: "redacted_thinking", data: "DA" }, 1);
    const rb = reasoningDetail({ type: "redacted_thinking", data: "DB" }, 1);
    expect(replayedThinking({ reasoning_details: [a, ra, b, rb] })).toEqual([
      { type: "thinking", thinking: "first", signature: "SA" },
      { type: "redacted_thinking", data: "DA" },
      { type: "thinking", thinking: "second", signature: "SB" },
      { type: "redacted_thinking", data: "DB" },
    ]);
    // Streamed pieces of the second block after the first one's signature are still joined among themselves.
    expect(replayedThinking({ reasoning_details: [
      a,
      { type: "reasoning.text", text: "sec", index: 0, format: "anthropic-claude-v1" },
      { type: "reasoning.text", text: "ond", signature: "SB", index: 0, format: "anthropic-claude-v1" },
    ] })).toEqual([{ type: "thinking", thinking: "first", signature: "SA" }, { type: "thinking", thinking: "second", signature: "SB" }]);
  });

  it("LiteLLM thinking_blocks pieces are joined up to their signature; reasoning_details wins when both are present", () => {
    expect(replayedThinking({ thinking_blocks: [
      { type: "thinking", thinking: "a" }, { type: "thinking", thinking: "b", signature: "S1" }, { type: "redacted_thinking", data: "D" },
    ] })).toEqual([{ type: "thinking", thinking: "ab", signature: "S1" }, { type: "redacted_thinking", data: "D" }]);
    expect(replayedThinking({
      reasoning_details: [reasoningDetail({ type: "thinking", thinking: "x", signature: "S2" }, 0)],
      thinking_blocks: [{ type: "thinking", thinking: "y", signature: "S3" }],
    })).toEqual([{ type: "thinking", thinking: "x", signature: "S2" }]);
    expect(replayedThinking({ reasoning_content: "only text" })).toEqual([]);
  });
});
