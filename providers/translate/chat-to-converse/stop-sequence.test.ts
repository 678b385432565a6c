import { describe, expect, it } from "vitest";
import { askStopSequence, converseStopOf } from "./stop-sequence.ts";

const CLAUDE = "global.anthropic.claude-sonnet-4-6";

describe("asking Converse which stop sequence matched", () => {
  it("Claude with stop sequences is asked at both paths, beside any already asked (each once)", () => {
    const body = { messages: [], inferenceConfig: { stopSequences: ["END"] }, additionalModelResponseFieldPaths: ["/stop_reason", "/stop_sequence"] };
    expect(askStopSequence(body, CLAUDE).additionalModelResponseFieldPaths).toEqual(["/stop_reason", "/stop_sequence", "/delta/stop_sequence"]);
  });

  it("another family, or a request without stop sequences, is sent as it was", () => {
    expect(askStopSequence({ messages: [], inferenceConfig: { stopSequences: ["END"] } }, "us.amazon.nova-pro-v1:0")).not.toHaveProperty("additionalModelResponseFieldPaths");
    expect(askStopSequence({ messages: [], inferenceConfig: { maxTokens: 9 } }, CLAUDE)).not.toHaveProperty("additionalModelResponseFieldPaths");
  });
});

describe("the stop sequence a Converse answer stopped at", () => {
  it("as the answer names it (JSON's stop_sequence, a stream's delta.stop_sequence)", () => {
    expect(converseStopOf("stop_sequence", { stop_sequence: "STOP" }, ["END", "STOP"])).toEqual({ reason: "stop_sequence", sequence: "STOP" });
    expect(converseStopOf("stop_sequence", { delta: { stop_sequence: "STOP" } }, ["END", "STOP"])).toEqual({ reason: "stop_sequence", sequence: "STOP" });
  });

  it("named nowhere: the only one sent; of several, nothing said (finish_reason decides)", () => {
    expect(converseStopOf("stop_sequence", undefined, ["END"])).toEqual({ reason: "stop_sequence", sequence: "END" });
    expect(converseStopOf("stop_sequence", { stop_sequence: null }, ["END", "STOP"])).toBeUndefined();
    expect(converseStopOf("stop_sequence", undefined, [])).toBeUndefined();
  });

  it("a full context window is said; other stops are left to finish_reason", () => {
    expect(converseStopOf("model_context_window_exceeded", undefined, [])).toEqual({ reason: "model_context_window_exceeded" });
    expect(converseStopOf("end_turn", { stop_sequence: "END" }, ["END"])).toBeUndefined();
  });
});
