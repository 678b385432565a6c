import { describe, expect, it } from "vitest";
import { cacheReadTokensOf, cacheWriteTokensOf } from "./openai-chat-usage.ts";
import { openAIToAnthropicUsage } from "./anthropic-messages/usage.ts";
import { responsesUsage } from "../translate/responses-to-chat/response.ts";
import { usageMetadataOf } from "../translate/gemini-to-chat/response.ts";

// DeepSeek reports cache hits beside prompt_tokens, not in prompt_tokens_details (its API docs; vercel/ai reads them so).
const deepseek = { prompt_tokens: 10000, completion_tokens: 20, total_tokens: 10020, prompt_cache_hit_tokens: 9000, prompt_cache_miss_tokens: 1000 };

describe("cache figures of an OpenAI-style usage", () => {
  it("read from cached_tokens, else DeepSeek's prompt_cache_hit_tokens; writes from cache_write_tokens", () => {
    expect(cacheReadTokensOf(deepseek)).toBe(9000);
    expect(cacheReadTokensOf({ prompt_tokens_details: { cached_tokens: 5 }, prompt_cache_hit_tokens: 9 })).toBe(5);
    expect(cacheWriteTokensOf({ prompt_tokens_details: { cache_write_tokens: 7 } })).toBe(7);
    expect([cacheReadTokensOf(undefined), cacheWriteTokensOf({})]).toEqual([0, 0]);
  });

  // What the ledger bills for the same usage: providers/openai-compatible/usage.test.ts (input 1000, cache reads 9000).
  it("every client is shown the cache reads the ledger bills (DeepSeek): Anthropic, Responses and Gemini usage", () => {
    expect(openAIToAnthropicUsage(deepseek)).toMatchObject({ input_tokens: 1000, cache_read_input_tokens: 9000 });
    expect(responsesUsage(deepseek).input_tokens_details).toMatchObject({ cached_tokens: 9000 });
    expect(usageMetadataOf(deepseek)).toMatchObject({ promptTokenCount: 10000, cachedContentTokenCount: 9000 });
  });
});
