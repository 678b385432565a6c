import { describe, expect, it } from "vitest";
import { geminiContinuesStored, responsesContinuesStored } from "./stored-state.ts";

describe("continues stored state", () => {
  it("a Responses body naming a stored response, conversation, prompt or item", () => {
    expect(responsesContinuesStored({ previous_response_id: "resp_1" })).toBe(true);
    expect(responsesContinuesStored({ conversation: "conv_1" })).toBe(true);
    expect(responsesContinuesStored({ conversation: { id: "conv_1" } })).toBe(true);
    expect(responsesContinuesStored({ prompt: { id: "pmpt_1", variables: {} } })).toBe(true);
    expect(responsesContinuesStored({ input: [{ role: "user", content: "x" }, { type: "item_reference", id: "msg_1" }] })).toBe(true);
  });

  it("not one with no id, an empty id or only client-written input", () => {
    for (const body of [{}, { previous_response_id: "" }, { previous_response_id: null }, { conversation: "" }, { conversation: { id: "" } }, { prompt: { variables: { a: "b" } } }, { input: "hi" }, { input: [{ type: "function_call_output", call_id: "c", output: "x" }] }, null]) {
      expect(responsesContinuesStored(body), JSON.stringify(body)).toBe(false);
    }
  });

  it("a Gemini body naming a context cache, either spelling, top level or nested", () => {
    expect(geminiContinuesStored({ cachedContent: "cachedContents/a" })).toBe(true);
    expect(geminiContinuesStored({}, { cachedContent: "cachedContents/a" })).toBe(true);
    expect(geminiContinuesStored({ cachedContent: "" }, undefined)).toBe(false);
  });
});
