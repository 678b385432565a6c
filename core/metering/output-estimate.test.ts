import { describe, expect, it } from "vitest";
import { answerOutputTokens, eventOutputTokens } from "./output-estimate.ts";
import { estimateTokens, estimateTokensBounded } from "./estimate-tokens.ts";

const TEXT = "The upstream streamed this answer without any usage, so the gateway estimates it. ".repeat(8);
const chunk = (delta: Record<string, unknown>) => ({ data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: null }] }) });

describe("eventOutputTokens", () => {
  it("chat: content, reasoning, refusal and tool-call arguments count; the envelope does not", () => {
    expect(eventOutputTokens("chat", chunk({ role: "assistant", content: "" }))).toBe(0);
    expect(eventOutputTokens("chat", chunk({ content: TEXT }))).toBe(estimateTokens(TEXT));
    expect(eventOutputTokens("chat", chunk({ reasoning_content: "Let me think." }))).toBe(estimateTokens("Let me think."));
    const args = JSON.stringify({ city: "Paris", units: "celsius" });
    expect(eventOutputTokens("chat", chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }))).toBe(estimateTokens(args));
    expect(eventOutputTokens("chat", { data: '{"choices":[{"delta":{"content" : "spaced  out"}}]}' })).toBe(estimateTokens("spaced  out"));
  });

  it("a piece of generated text is at least a token (a lone newline is one); an empty one and framing are none", () => {
    expect(eventOutputTokens("chat", chunk({ content: "\n\n" }))).toBe(1);
    expect(eventOutputTokens("messages", { event: "content_block_delta", data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " " } }) })).toBe(1);
    expect(eventOutputTokens("messages", { event: "ping", data: '{"type":"ping"}' })).toBe(0);
    expect(eventOutputTokens("responses", { event: "response.created", data: JSON.stringify({ type: "response.created", response: { id: "r", output: [] } }) })).toBe(0);
    expect(eventOutputTokens("responses", { event: "response.output_item.added", data: JSON.stringify({ type: "response.output_item.added", item: { type: "message", content: [] } }) })).toBe(0);
  });

  it("escapes are undone before estimating, and an escaped quote does not end the string", () => {
    const text = 'She said "hi"\nand left — 東京';
    expect(eventOutputTokens("chat", chunk({ content: text }))).toBe(estimateTokens(text));
    expect(eventOutputTokens("chat", { data: '{"choices":[{"delta":{"content":"a \\"content\\": \\"x\\""}}]}' })).toBe(estimateTokens('a "content": "x"'));
  });

  it("messages: only content_block_delta text, thinking and partial_json", () => {
    const delta = (d: Record<string, unknown>) => ({ event: "content_block_delta", data: JSON.stringify({ type: "content_block_delta", index: 0, delta: d }) });
    expect(eventOutputTokens("messages", delta({ type: "text_delta", text: TEXT }))).toBe(estimateTokens(TEXT));
    expect(eventOutputTokens("messages", delta({ type: "thinking_delta", thinking: "Hmm." }))).toBe(estimateTokens("Hmm."));
    expect(eventOutputTokens("messages", delta({ type: "input_json_delta", partial_json: '{"city": "Pa' }))).toBe(estimateTokens('{"city": "Pa'));
    expect(eventOutputTokens("messages", { event: "content_block_start", data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' })).toBe(0);
    expect(eventOutputTokens("messages", { event: "message_start", data: JSON.stringify({ type: "message_start", message: { content: [{ type: "text", text: TEXT }] } }) })).toBe(0);
  });

  it("responses: only *.delta events, named or typed in their JSON", () => {
    expect(eventOutputTokens("responses", { event: "response.output_text.delta", data: JSON.stringify({ type: "response.output_text.delta", delta: TEXT }) })).toBe(estimateTokens(TEXT));
    expect(eventOutputTokens("responses", { data: JSON.stringify({ type: "response.function_call_arguments.delta", delta: '{"a":1}' }) })).toBe(estimateTokens('{"a":1}'));
    // The done events repeat the text already counted from the deltas.
    expect(eventOutputTokens("responses", { event: "response.output_text.done", data: JSON.stringify({ type: "response.output_text.done", text: TEXT }) })).toBe(0);
  });
});

describe("answerOutputTokens", () => {
  it("chat, messages and responses answers: the generated text, tool arguments and tool inputs", () => {
    const chat = { id: "c", object: "chat.completion", model: "m", choices: [{ index: 0, message: { role: "assistant", content: TEXT, tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: '{"a":1}' } }] }, finish_reason: "stop" }] };
    expect(answerOutputTokens(chat)).toBe(estimateTokens(TEXT) + estimateTokens('{"a":1}'));
    const messages = { id: "m", type: "message", role: "assistant", model: "claude", content: [{ type: "thinking", thinking: "Hmm." }, { type: "text", text: TEXT }, { type: "tool_use", id: "t", name: "f", input: { a: 1 } }] };
    expect(answerOutputTokens(messages)).toBe(estimateTokens("Hmm.") + estimateTokens(TEXT) + estimateTokens('{"a":1}'));
    const responses = { id: "r", object: "response", instructions: "Be brief.", text: { format: { type: "text" } }, output: [{ type: "message", content: [{ type: "output_text", text: TEXT }] }] };
    expect(answerOutputTokens(responses)).toBe(estimateTokens(TEXT));
  });

  it("any nesting depth, without recursion", () => {
    let deep: any = { text: "leaf" };
    for (let i = 0; i < 100_000; i++) deep = { content: [deep] };
    expect(answerOutputTokens(deep)).toBe(1);
  });
});

describe("estimateTokensBounded", () => {
  it("is estimateTokens up to 64 Ki characters, and a sample scaled to the length past it (erring high)", () => {
    expect(estimateTokensBounded(TEXT)).toBe(estimateTokens(TEXT));
    const long = TEXT.repeat(2000);
    const est = estimateTokensBounded(long);
    expect(est).toBeGreaterThanOrEqual(estimateTokens(long));
    expect(est).toBeLessThan(estimateTokens(long) * 1.01);
  });
});

describe("Gemini answers", () => {
  const part = (p: Record<string, unknown>) => ({ candidates: [{ content: { role: "model", parts: [p] }, finishReason: "STOP" }] });

  it("a stream event's parts text counts, a functionCall's args as its JSON, the envelope not", () => {
    expect(eventOutputTokens("gemini", { data: JSON.stringify(part({ text: TEXT })) })).toBe(estimateTokens(TEXT));
    const args = { city: "Paris", units: "celsius" };
    expect(eventOutputTokens("gemini", { data: JSON.stringify(part({ functionCall: { name: "weather", args } })) })).toBe(estimateTokens(JSON.stringify(args)));
    expect(eventOutputTokens("gemini", { data: JSON.stringify({ candidates: [{ finishReason: "STOP" }], modelVersion: "gemini-2.5-flash" }) })).toBe(0);
  });

  it("a JSON answer's candidates[].content.parts[].text counts", () => {
    expect(answerOutputTokens(part({ text: TEXT }))).toBe(estimateTokens(TEXT));
    expect(answerOutputTokens(part({ functionCall: { name: "f", args: { a: 1 } } }))).toBe(estimateTokens('{"a":1}'));
  });
});
