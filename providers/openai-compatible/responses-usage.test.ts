import { describe, expect, it } from "vitest";
import { fromResponsesUsage } from "./responses-usage.ts";

describe("Responses API usage -> metered usage", () => {
  it("cache reads and writes are parts of input_tokens: input is what is left, so no input token is billed twice", () => {
    const u = fromResponsesUsage({ input_tokens: 1000, output_tokens: 10, input_tokens_details: { cached_tokens: 200, cache_write_tokens: 300 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(u).toEqual({ inputTokens: 500, outputTokens: 10, cacheReadTokens: 200, cacheWriteTokens: 300 });
  });

  it("reasoning and web searches are counted; input never goes negative", () => {
    const u = fromResponsesUsage({ input_tokens: 100, output_tokens: 50, input_tokens_details: { cached_tokens: 90, cache_write_tokens: 20 }, output_tokens_details: { reasoning_tokens: 30 } },
      [{ type: "web_search_call" }, { type: "message" }, { type: "web_search_call" }]);
    expect(u).toEqual({ inputTokens: 0, outputTokens: 50, cacheReadTokens: 90, cacheWriteTokens: 20, reasoningTokens: 30, webSearches: 2 });
  });
});
