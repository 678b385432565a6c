import { describe, expect, it } from "vitest";
import { anthropicToOpenAIUsage, fromAnthropicUsage, openAIToAnthropicUsage } from "./usage.ts";

describe("usage conversions", () => {
  it("canonical, OpenAI and back without double counting cache tokens", () => {
    const a = { input_tokens: 10, cache_read_input_tokens: 30, cache_creation_input_tokens: 5, output_tokens: 7 };
    expect(fromAnthropicUsage(a)).toEqual({ inputTokens: 10, outputTokens: 7, cacheReadTokens: 30, cacheWriteTokens: 5 });
    const o = anthropicToOpenAIUsage(a);
    expect(o).toMatchObject({ prompt_tokens: 45, completion_tokens: 7, total_tokens: 52 });
    expect(openAIToAnthropicUsage(o)).toEqual(a);
  });
});
