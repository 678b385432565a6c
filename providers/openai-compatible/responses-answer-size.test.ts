import { describe, expect, it } from "vitest";
import { deltaChars } from "./responses-answer-size.ts";

describe("deltaChars", () => {
  it("measures the delta string as sent, escapes included, wherever it lies in the event", () => {
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta", delta: "Hello", logprobs: [] }))).toBe(5);
    expect(deltaChars(JSON.stringify({ delta: 'say "hi"\\', item_id: "m" }))).toBe('say \\"hi\\"\\\\'.length);
    expect(deltaChars('{"type":"response.audio.delta", "delta" :  "QUJD"}')).toBe(4);
    expect(deltaChars(JSON.stringify({ delta: "" }))).toBe(0);
  });

  it("is 0 for an event without a string delta", () => {
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta" }))).toBe(0);
    expect(deltaChars(JSON.stringify({ type: "x", delta: 5 }))).toBe(0);
  });
});

describe("deltaChars after an offset", () => {
  it("finds the delta before the offset too (a key order other than OpenAI's)", () => {
    const data = JSON.stringify({ delta: "abc", type: "response.output_text.delta" });
    expect(deltaChars(data, 40)).toBe(3);
    expect(deltaChars(JSON.stringify({ type: "response.output_text.delta", delta: "abcd" }), 36)).toBe(4);
  });
});
