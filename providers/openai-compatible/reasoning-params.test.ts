import { describe, expect, it } from "vitest";
import { isOpenAIReasoningModel, isReasoningTarget } from "./reasoning-params.ts";

describe("isOpenAIReasoningModel (recognised from the upstream id, as the OpenAI clients do)", () => {
  it.each(["o1", "o1-mini", "o1-preview", "o3", "o3-mini", "o3-pro", "o4-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-2025-08-07", "gpt-5.1", "gpt-5.2-pro", "gpt-5-codex", "openai/o4-mini", "openai/gpt-5"])("%s is one", (id) => {
    expect(isOpenAIReasoningModel(id)).toBe(true);
  });

  it.each(["gpt-5-chat-latest", "gpt-5.1-chat-latest", "gpt-5-chat", "gpt-4o-mini", "gpt-4.1", "gpt-4o", "gpt-50x", "omni-moderation-latest", "o", "open-mistral-7b", "openai/gpt-oss-120b", "gpt-3.5-turbo"])("%s is not", (id) => {
    expect(isOpenAIReasoningModel(id)).toBe(false);
  });
});

describe("isReasoningTarget: the catalog flag overrides the recognition either way", () => {
  it("without the flag the upstream id decides", () => {
    expect(isReasoningTarget({ upstreamModel: "o4-mini" })).toBe(true);
    expect(isReasoningTarget({ upstreamModel: "gpt-4o-mini" })).toBe(false);
  });

  it("reasoning_model: false keeps a look-alike id classic; true marks a deployment name that says nothing", () => {
    expect(isReasoningTarget({ upstreamModel: "o4-mini", reasoningModel: false })).toBe(false);
    expect(isReasoningTarget({ upstreamModel: "my-prod-deployment", reasoningModel: true })).toBe(true);
  });
});
