import { describe, expect, it } from "vitest";
import { chatToGeminiRequest } from "./request.ts";
import { toolCallId } from "./response.ts";

const target = { modelId: "google/g", provider: "gem", upstreamModel: "g", pricing: {} } as any;
const call = (id: string, name: string) => ({ id, type: "function", function: { name, arguments: "{}" } });

describe("chat -> gemini: function calls Gemini did not sign", () => {
  it("the first call of a model turn gets Google's placeholder signature (Gemini refuses an unsigned replayed call)", () => {
    // A call made by another model (a fallback, a model switch) or by a stateless client: no signature in its id.
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: "Let me look.", tool_calls: [call("call_a", "f"), call("call_b", "g")] },
      { role: "tool", tool_call_id: "call_a", content: "A" },
      { role: "tool", tool_call_id: "call_b", content: "B" },
    ] }, target);
    expect((body.contents as any)[1].parts).toEqual([
      { text: "Let me look." },
      { functionCall: { name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { name: "g", args: {} } },
    ]);
  });

  it("a call Gemini signed keeps its own signature", () => {
    const id = toolCallId({ functionCall: {}, thoughtSignature: "c2ln" });
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [call(id, "f")] },
      { role: "tool", tool_call_id: id, content: "A" },
    ] }, target);
    expect((body.contents as any)[1].parts).toEqual([{ functionCall: { name: "f", args: {} }, thoughtSignature: "c2ln" }]);
  });
});

describe("chat -> gemini: prompt_cache_key", () => {
  it("Gemini has no cache routing key or retention: both are named dropped, not sent", () => {
    const t = chatToGeminiRequest({ messages: [{ role: "user", content: "hi" }], prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" }, target);
    expect(t.dropped).toEqual(["prompt_cache_key", "prompt_cache_retention"]);
    expect(JSON.stringify(t.body)).not.toContain("tenant-42");
  });
});
