import { describe, expect, it } from "vitest";
import { chatToMessagesResponse } from "./response.ts";
import { messagesToChatResponse } from "../chat-to-messages/response.ts";

/** The usage fields chat does not say, as a Messages answer carries them. */
const UNSAID_USAGE = { cache_creation: null, server_tool_use: null, service_tier: null, inference_geo: null, output_tokens_details: null, speed: null };

describe("non-streaming response translation", () => {
  it("chat -> messages: text then tool_use blocks, stop reason and usage without double-counting cached tokens", () => {
    const msg = chatToMessagesResponse({
      id: "chatcmpl-9", model: "gpt", choices: [{ message: { content: "hi", tool_calls: [{ id: "c1", function: { name: "f", arguments: "{\"a\":1}" } }] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } },
    }, { flavor: "chat", provider: "p" });
    expect(msg).toEqual({
      id: "msg_9", type: "message", role: "assistant", model: "gpt",
      content: [{ type: "text", text: "hi", citations: null }, { type: "tool_use", id: "c1", name: "f", input: { a: 1 }, caller: { type: "direct" } }],
      stop_reason: "tool_use", stop_sequence: null,
      usage: { ...UNSAID_USAGE, input_tokens: 40, output_tokens: 7, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 },
    });
  });

  it("chat -> messages: every field Anthropic's answer has (the SDK types them required), null where chat does not say; the tier by Anthropic's name", () => {
    const answer = (extra: Record<string, unknown>) => chatToMessagesResponse({
      id: "chatcmpl-2", model: "gpt", choices: [{ message: { content: "hi", refusal: null }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 2, completion_tokens_details: { reasoning_tokens: 1 } }, ...extra,
    }, { flavor: "chat", provider: "p" }) as any;
    const msg = answer({ service_tier: "default" });
    expect(msg.content).toEqual([{ type: "text", text: "hi", citations: null }]);
    expect(msg.usage).toEqual({ ...UNSAID_USAGE, input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" });
    expect(answer({ service_tier: "priority" }).usage.service_tier).toBe("priority");
    // A tier Anthropic has no name for (flex), or none said (Gemini, Converse): null, not a guess.
    expect(answer({ service_tier: "flex" }).usage.service_tier).toBeNull();
    expect(answer({}).usage.service_tier).toBeNull();
    // A refusal's text is a text block like any.
    const refused: any = chatToMessagesResponse({ choices: [{ message: { content: null, refusal: "No." }, finish_reason: "stop" }] }, { flavor: "chat", provider: "p" });
    expect(refused.content).toEqual([{ type: "text", text: "No.", citations: null }]);
  });

  it("chat -> messages: OpenAI's stop does not say whether a stop sequence matched: end_turn, stop_sequence null", () => {
    const msg = chatToMessagesResponse({ choices: [{ message: { content: "1 2 3" }, finish_reason: "stop" }] }, { flavor: "chat", provider: "p" });
    expect(msg).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("messages -> chat: joins text, tool calls as JSON strings, thinking with signatures, all input tokens in prompt_tokens", () => {
    const chat: any = messagesToChatResponse({
      id: "msg_1", model: "claude", stop_reason: "max_tokens",
      content: [{ type: "thinking", thinking: "t", signature: "sig" }, { type: "text", text: "a" }, { type: "text", text: "b" }, { type: "tool_use", id: "tu", name: "f", input: { x: 1 } }],
      usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 3 },
    }, 7);
    expect(chat.choices[0]).toEqual({
      index: 0, logprobs: null, finish_reason: "length",
      message: { role: "assistant", content: "ab", refusal: null, tool_calls: [{ id: "tu", type: "function", function: { name: "f", arguments: "{\"x\":1}" } }], reasoning_content: "t", reasoning_details: [{ type: "reasoning.text", text: "t", signature: "sig", format: "anthropic-claude-v1", index: 0 }], thinking_blocks: [{ type: "thinking", thinking: "t", signature: "sig" }] },
    });
    expect(chat.usage).toEqual({ prompt_tokens: 17, completion_tokens: 3, total_tokens: 20, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 2 } });
  });

  it("chat -> messages: a refusal is stop_reason refusal, as the stream says; another finish reason keeps its own", () => {
    const refuse = (finish_reason: string | null) => chatToMessagesResponse({ id: "chatcmpl-1", choices: [{ message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason }] }, { flavor: "chat", provider: "p" });
    expect(refuse("stop")).toMatchObject({ content: [{ type: "text", text: "I can't help with that." }], stop_reason: "refusal" });
    expect(refuse(null).stop_reason).toBe("refusal");
    expect(refuse("length").stop_reason).toBe("max_tokens");
    expect(chatToMessagesResponse({ choices: [{ message: { content: "fine", refusal: null }, finish_reason: "stop" }] }, { flavor: "chat", provider: "p" }).stop_reason).toBe("end_turn");
  });
});
