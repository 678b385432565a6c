import { describe, expect, it } from "vitest";
import { droppedKnobs } from "./knobs.ts";

describe("reasoning knobs a target cannot honour", () => {
  const body = { providerOptions: { gateway: { caching: "auto" }, claude: { reasoningEffort: "high", reasoningSummary: "auto", thinkingBudget: 0.01 }, gem: { thinkingBudget: 0.01 } } };
  it("native provider keeps what its protocol supports; other namespaces are reported", () => {
    expect(droppedKnobs(body, "anthropic", "claude")).toEqual(["providerOptions.claude.reasoningSummary", "providerOptions.gem.thinkingBudget"]);
    expect(droppedKnobs(body, "gemini", "gem")).toEqual(["providerOptions.claude.reasoningEffort", "providerOptions.claude.reasoningSummary", "providerOptions.claude.thinkingBudget"]);
  });
  it("bedrock (Converse) honours Claude's two", () => {
    expect(droppedKnobs(body, "bedrock", "claude")).toEqual(["providerOptions.claude.reasoningSummary", "providerOptions.gem.thinkingBudget"]);
  });
  it("the simulator honours none", () => {
    expect(droppedKnobs({ providerOptions: { sim: { reasoningEffort: "low" } } }, "sim", "sim")).toEqual(["providerOptions.sim.reasoningEffort"]);
    expect(droppedKnobs({}, "sim", "sim")).toEqual([]);
  });
});
