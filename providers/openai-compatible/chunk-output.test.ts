import { describe, expect, it } from "vitest";
import { chunkOutput, FINISH, NO_OUTPUT, PREAMBLE, TOKEN } from "./chunk-output.ts";

const c = (delta: unknown, finish: string | null = null) => JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });

describe("chunkOutput", () => {
  it("a role-only chunk, empty strings, Azure's filter results, a usage chunk or non-JSON hold no output", () => {
    for (const d of [c({ role: "assistant", content: "" }), c({ content: null, refusal: null, tool_calls: [] }), '{"choices":[],"prompt_filter_results":[]}', '{"choices":[],"usage":{"prompt_tokens":1}}', "not json"]) {
      expect(chunkOutput(d)).toBe(NO_OUTPUT);
    }
  });

  it("content, reasoning (any host's field), a refusal or a tool call is a token", () => {
    for (const delta of [{ content: "a" }, { reasoning_content: "r" }, { reasoning: "r" }, { reasoning_details: [{ type: "reasoning.text" }] }, { refusal: "no" }, { tool_calls: [{ index: 0 }] }]) {
      expect(chunkOutput(c(delta))).toBe(TOKEN);
    }
  });

  it("a finish_reason without output ends an empty answer", () => {
    expect(chunkOutput(c({}, "stop"))).toBe(FINISH);
    expect(chunkOutput(c({ content: "x" }, "stop"))).toBe(TOKEN);
  });

  it("Azure's prompt filter preamble (empty object and id, no choices) is told apart from a usage chunk", () => {
    expect(chunkOutput('{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}')).toBe(PREAMBLE);
    expect(chunkOutput('{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1}}')).toBe(NO_OUTPUT);
  });
});
