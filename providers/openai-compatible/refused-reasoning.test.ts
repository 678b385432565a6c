import { describe, expect, it } from "vitest";
import { cannotReason, dropChatEffort, dropResponsesReasoning } from "./refused-reasoning.ts";
import type { Target } from "../../core/contracts/provider.ts";

const gpt41: Target = { modelId: "openai/gpt-4.1", provider: "openai", upstreamModel: "gpt-4.1", pricing: {}, reasoning: false };

describe("the reasoning knobs an endpoint refuses", () => {
  it("known not to reason: tags without `reasoning`, unless the upstream id or reasoning_model says it reasons", () => {
    expect(cannotReason(gpt41)).toBe(true);
    expect(cannotReason({ ...gpt41, reasoning: undefined })).toBe(false); // an entry without tags
    expect(cannotReason({ ...gpt41, upstreamModel: "o3" })).toBe(false);
    expect(cannotReason({ ...gpt41, reasoningModel: true })).toBe(false);
  });

  it("chat: a null effort goes unnamed; a model that refuses only the knob (grok) keeps its own name", () => {
    const out: Record<string, unknown> = { reasoning_effort: null };
    expect(dropChatEffort(out, gpt41)).toBeUndefined();
    expect(out).toEqual({});
    expect(dropChatEffort({ reasoning_effort: "low" }, gpt41)).toBe("unreasoning");
    const grok: Target = { ...gpt41, upstreamModel: "grok-4.20-0309-reasoning", reasoning: true, acceptsReasoningEffort: false };
    expect(dropChatEffort({ reasoning_effort: "low" }, grok)).toBe("no-knob");
  });

  it("Responses: a model that takes no knob loses the effort alone; its summary and include stay", () => {
    const grok: Target = { ...gpt41, upstreamModel: "grok-4.20-0309-reasoning", reasoning: true, acceptsReasoningEffort: false };
    const out: Record<string, unknown> = { reasoning: { effort: "high", summary: "auto" }, include: ["reasoning.encrypted_content"] };
    expect(dropResponsesReasoning(out, grok)).toEqual(["reasoning.effort"]);
    expect(out).toEqual({ reasoning: { summary: "auto" }, include: ["reasoning.encrypted_content"] });
    const old: Record<string, unknown> = { reasoning: { generate_summary: "concise" } };
    expect(dropResponsesReasoning(old, gpt41)).toEqual(["reasoning.generate_summary"]);
    expect(old).toEqual({});
  });
});
