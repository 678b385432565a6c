// Each upstream protocol's JSON decoder (the openai driver's chat and Responses: openai-compatible/answer-shape.test.ts) refuses a 200 whose body is JSON but not an answer (a retryable 502
// invalid_answer, nothing reported as usage), and keeps the shapes the real APIs send.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { UpstreamResponse } from "./http.ts";
import { messagesAnswer } from "./codecs/anthropic-messages/answer.ts";
import { geminiAnswer } from "./codecs/gemini/answer.ts";
import { checkConverseAnswer } from "./answer-shape.ts";
import { invalidAnswer as invalid, recordingCall as call } from "./answer-shape.testkit.ts";

const response = (body: string) => ({ status: 200, headers: { "content-type": "application/json" }, body: Readable.from([Buffer.from(body)]) }) as unknown as UpstreamResponse;
const usage = { input_tokens: 20, output_tokens: 3 };

async function outcome(run: () => Promise<{ kind: string; body?: unknown }>): Promise<unknown> {
  return run().then((r) => r.body, (e) => e);
}

describe("Anthropic Messages JSON (messagesAnswer: Anthropic, Claude on Vertex; Bedrock InvokeModel shares acceptMessage)", () => {
  const answer = async (body: unknown) => {
    const c = call();
    return { got: await outcome(() => messagesAnswer("an", response(JSON.stringify(body)), false, c.options)), usage: c.usage };
  };

  it.each([
    ["null", null],
    ["an array", [1, 2]],
    ["{}", {}],
    ["content a string", { id: "msg_1", type: "message", role: "assistant", content: "Hello there", stop_reason: "end_turn", usage }],
    ["a Bedrock-style message on a 200", { message: "boom" }],
    ["a text block without text", { id: "msg_1", type: "message", role: "assistant", content: [{ type: "text" }], stop_reason: "end_turn", usage }],
    ["a thinking block without thinking", { id: "msg_1", type: "message", role: "assistant", content: [{ type: "thinking", signature: "s" }, { type: "text", text: "hi" }], stop_reason: "end_turn", usage }],
    ["a block that is not an object", { id: "msg_1", type: "message", role: "assistant", content: ["hi"], stop_reason: "end_turn" }],
  ])("%s is a retryable 502 invalid_answer, no usage reported", async (_, body) => {
    const { got, usage: reported } = await answer(body);
    expect(got).toMatchObject(invalid("an"));
    expect(reported).toEqual([]);
  });

  it("an end_turn with empty content, and tool_use and redacted_thinking blocks, are answers", async () => {
    for (const content of [[], [{ type: "redacted_thinking", data: "x" }, { type: "tool_use", id: "t", name: "f", input: {} }], [{ type: "text", text: "" }]]) {
      const body = { id: "msg_1", type: "message", role: "assistant", content, stop_reason: "end_turn", usage };
      expect((await answer(body)).got).toEqual(body);
    }
  });
});

describe("Gemini generateContent JSON (geminiAnswer: Gemini API and Vertex)", () => {
  const answer = (body: unknown) => outcome(() => geminiAnswer("ge", response(JSON.stringify(body)), call().options, false));

  it.each([
    ["null", null],
    ["an array", [1, 2]],
    ["{}", {}],
    ["candidates: [] without a block reason", { candidates: [], usageMetadata: { promptTokenCount: 3 } }],
    ["candidates an object", { candidates: { 0: { content: { parts: [{ text: "hi" }] } } } }],
    ["a candidate that is not an object", { candidates: [null] }],
  ])("%s is a retryable 502 invalid_answer", async (_, body) => {
    expect(await answer(body)).toMatchObject(invalid("ge"));
  });

  it("a blocked prompt (promptFeedback.blockReason, no candidates) and a candidate without content are answers", async () => {
    const blocked = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } };
    expect(await answer(blocked)).toEqual(blocked);
    const safety = { candidates: [{ finishReason: "SAFETY", index: 0 }] };
    expect(await answer(safety)).toEqual(safety);
  });
});

describe("Bedrock Converse JSON", () => {
  it.each([
    ["null", null],
    ["{}", {}],
    ["a message on a 200", { message: "boom" }],
    ["content a string", { output: { message: { role: "assistant", content: "hi" } }, stopReason: "end_turn" }],
  ])("%s is a retryable 502 invalid_answer", (_, body) => {
    expect(() => checkConverseAnswer("fb", body)).toThrow(expect.objectContaining(invalid("fb")));
  });

  it("an answer with content blocks is one", () => {
    const body = { output: { message: { role: "assistant", content: [{ text: "hi" }] } }, stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } };
    expect(checkConverseAnswer("fb", body)).toBe(body);
  });
});
