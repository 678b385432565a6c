import { describe, expect, it } from "vitest";
import { fromOpenAIUsage } from "./usage.ts";

describe("OpenAI chat usage -> metered usage", () => {
  it("cache reads and writes are parts of prompt_tokens: input is what is left, so no prompt token is billed twice", () => {
    // OpenRouter-style: 1000 prompt tokens, 200 read from the cache, 300 written to it.
    const u = fromOpenAIUsage({ prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 300 } });
    expect(u).toEqual({ inputTokens: 500, outputTokens: 10, cacheReadTokens: 200, cacheWriteTokens: 300 });
    // The peers' top-level write field is the same part of prompt_tokens.
    expect(fromOpenAIUsage({ prompt_tokens: 1000, completion_tokens: 0, cache_creation_input_tokens: 300 })).toEqual({ inputTokens: 700, outputTokens: 0, cacheWriteTokens: 300 });
  });

  it("DeepSeek's prompt_cache_hit_tokens are cache reads (billed at input_cache_read), its misses input", () => {
    const u = fromOpenAIUsage({ prompt_tokens: 10000, completion_tokens: 10, prompt_cache_hit_tokens: 9000, prompt_cache_miss_tokens: 1000 });
    expect(u).toEqual({ inputTokens: 1000, outputTokens: 10, cacheReadTokens: 9000 });
    // OpenAI's own field wins where both are present.
    expect(fromOpenAIUsage({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 40 }, prompt_cache_hit_tokens: 90 }).cacheReadTokens).toBe(40);
  });

  it("plain usage, reasoning and missing fields", () => {
    expect(fromOpenAIUsage({ prompt_tokens: 12, completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 20 } })).toEqual({ inputTokens: 12, outputTokens: 30, reasoningTokens: 20 });
    expect(fromOpenAIUsage(undefined)).toEqual({ inputTokens: 0, outputTokens: 0 });
    // More cached than prompt (a peer's rounding) never makes input negative.
    expect(fromOpenAIUsage({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 80, cache_write_tokens: 40 } }).inputTokens).toBe(0);
  });
});
