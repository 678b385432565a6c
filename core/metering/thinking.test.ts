import { describe, expect, it } from "vitest";
import { chatThinkingTokens, dollarsToTokens, effortToTokens } from "./thinking.ts";

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
});
