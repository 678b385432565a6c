import { describe, expect, it } from "vitest";
import { leastOpenAIEffort } from "./openai-reasoning-models.ts";

describe("the effort closest to thinking off an OpenAI reasoning model takes", () => {
  it.each([
    ["gpt-5", "minimal"], ["gpt-5-mini", "minimal"], ["gpt-5-nano-2025-08-07", "minimal"], ["openai/gpt-5", "minimal"],
    ["gpt-5.1", "none"], ["gpt-5.2", "none"], ["o3", "low"], ["o4-mini", "low"], ["o1", "low"], ["gpt-5-codex", "low"],
  ])("%s: %s", (id, effort) => {
    expect(leastOpenAIEffort({ upstreamModel: id })).toBe(effort);
  });

  it("none on a -pro model (high only) or a model that is not one; the catalog flag marks a deployment name", () => {
    expect(leastOpenAIEffort({ upstreamModel: "gpt-5-pro" })).toBeUndefined();
    expect(leastOpenAIEffort({ upstreamModel: "o3-pro" })).toBeUndefined();
    expect(leastOpenAIEffort({ upstreamModel: "gpt-4o" })).toBeUndefined();
    expect(leastOpenAIEffort({ upstreamModel: "openai/gpt-oss-120b" })).toBeUndefined();
    expect(leastOpenAIEffort({ upstreamModel: "my-deployment", reasoningModel: true })).toBe("low");
  });
});
