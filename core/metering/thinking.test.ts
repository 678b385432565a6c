import { describe, expect, it } from "vitest";
import { chatThinkingTokens, dollarsToTokens, effortToTokens, messagesThinkingEffort } from "./thinking.ts";

describe("thinking budgets", () => {
  it("dollars -> tokens through the output price, exactly", () => {
    expect(dollarsToTokens(0.01, { pricing: { output: "0.000015" } })).toBe(666);
    expect(dollarsToTokens(0.03, { pricing: { output: "0.000015" } })).toBe(2000);
    expect(dollarsToTokens(0.03, { pricing: {} })).toBeUndefined();
  });
  it("effort names; the provider's own knob wins over reasoning_effort", () => {
    expect(effortToTokens("none")).toBeUndefined();
    expect(effortToTokens("medium")).toBe(2048);
    const target = { modelId: "m", provider: "p", upstreamModel: "u", pricing: { output: "0.00001" } };
    expect(chatThinkingTokens({ reasoning_effort: "low", providerOptions: { p: { reasoningEffort: "high" } } }, target)).toBe(4096);
    expect(chatThinkingTokens({ providerOptions: { p: { thinkingBudget: 0.05, reasoningEffort: "high" } } }, target)).toBe(5000);
    expect(chatThinkingTokens({ providerOptions: { other: { reasoningEffort: "high" } } }, target)).toBeUndefined();
  });
  it("Messages thinking as an effort: a budget rounded up, adaptive at output_config.effort, capped for chat", () => {
    expect(messagesThinkingEffort({ thinking: { type: "enabled", budget_tokens: 2000 } })).toBe("medium");
    expect(messagesThinkingEffort({ thinking: { type: "enabled", budget_tokens: 9000 } })).toBe("max");
    expect(messagesThinkingEffort({ thinking: { type: "enabled", budget_tokens: 9000 } }, "high")).toBe("high");
    expect(messagesThinkingEffort({ thinking: { type: "adaptive" }, output_config: { effort: "xhigh" } })).toBe("xhigh");
    expect(messagesThinkingEffort({ thinking: { type: "adaptive" }, output_config: { effort: "xhigh" } }, "high")).toBe("high");
    expect(messagesThinkingEffort({ thinking: { type: "adaptive" }, output_config: { effort: "bogus" } })).toBe("medium");
    expect(messagesThinkingEffort({ thinking: { type: "disabled" }, output_config: { effort: "high" } })).toBeUndefined();
    expect(messagesThinkingEffort({ output_config: { effort: "high" } })).toBeUndefined();
  });
  it("between_tools is thinking off (the SDK: only progress updates between tool calls): no effort, nothing reserved", () => {
    expect(messagesThinkingEffort({ thinking: { type: "between_tools" } })).toBeUndefined();
    expect(messagesThinkingEffort({ thinking: { type: "between_tools" }, output_config: { effort: "high" } })).toBeUndefined();
  });
});
