import { describe, expect, it } from "vitest";
import { fitEffort, thinkingOffFor } from "./reasoning-efforts.ts";

const m = (upstreamModel: string) => ({ upstreamModel });

describe("fitEffort: an effort the model does not take becomes the nearest that costs no more", () => {
  it("grok-3-mini takes low and high: medium is low, xhigh is high", () => {
    expect(fitEffort(m("grok-3-mini"), "medium")).toEqual({ effort: "low", fitted: true });
    expect(fitEffort(m("grok-3-mini-fast"), "xhigh")).toEqual({ effort: "high", fitted: true });
    expect(fitEffort(m("grok-3-mini"), "high")).toEqual({ effort: "high", fitted: false });
  });

  it("gpt-oss (any host's prefix) takes low, medium and high: minimal and none are its least, low", () => {
    expect(fitEffort(m("openai/gpt-oss-120b"), "minimal")).toEqual({ effort: "low", fitted: true });
    expect(fitEffort(m("accounts/fireworks/models/gpt-oss-20b"), "none")).toEqual({ effort: "low", fitted: true });
    expect(fitEffort(m("openai/gpt-oss-120b"), "medium")).toEqual({ effort: "medium", fitted: false });
    expect(fitEffort(m("gpt-oss:20b"), "minimal")).toEqual({ effort: "low", fitted: true }); // Ollama's tag
  });

  it("DeepSeek maps every named effort itself; models it does not know go as asked", () => {
    expect(fitEffort(m("deepseek-flash"), "medium")).toEqual({ effort: "medium", fitted: false });
    expect(fitEffort(m("gpt-5"), "minimal")).toEqual({ effort: "minimal", fitted: false });
    expect(fitEffort(m("llama-3.3-70b"), "medium")).toEqual({ effort: "medium", fitted: false });
  });
});

describe("thinkingOffFor: the model's own off, else its least effort, named", () => {
  it("DeepSeek's own API says off with its thinking field, not named; through an aggregator it is not known", () => {
    expect(thinkingOffFor(m("deepseek-flash"))).toEqual({ fields: { thinking: { type: "disabled" } }, named: false });
    expect(thinkingOffFor(m("deepseek-v4-pro"))).toEqual({ fields: { thinking: { type: "disabled" } }, named: false });
    expect(thinkingOffFor(m("deepseek/deepseek-v4-flash"))).toBeUndefined();
  });

  it("gpt-oss and grok-3-mini cannot stop reasoning: low, named", () => {
    expect(thinkingOffFor(m("openai/gpt-oss-120b"))).toEqual({ effort: "low", named: true });
    expect(thinkingOffFor(m("grok-3-mini"))).toEqual({ effort: "low", named: true });
  });

  it("OpenAI's reasoning models keep their least effort (none from GPT-5.1 on, not named)", () => {
    expect(thinkingOffFor(m("gpt-5"))).toEqual({ effort: "minimal", named: true });
    expect(thinkingOffFor(m("gpt-5.1"))).toEqual({ effort: "none", named: false });
    expect(thinkingOffFor(m("gpt-4.1"))).toBeUndefined();
  });
});
