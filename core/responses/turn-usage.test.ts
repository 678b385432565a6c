import { describe, expect, it } from "vitest";
import { addUsage, addWireUsage } from "./turn-usage.ts";

describe("usage of a response made of several model turns", () => {
  it("adds every billed count, web searches and images included, whichever turn had them", () => {
    const turn1 = { inputTokens: 100, outputTokens: 10, webSearches: 1 };
    const turn2 = { inputTokens: 200, outputTokens: 20, cacheReadTokens: 5, webSearches: 2, images: 1 };
    expect(addUsage(turn1, turn2)).toEqual({ inputTokens: 300, outputTokens: 30, cacheReadTokens: 5, webSearches: 3, images: 1 });
    expect(addUsage({ inputTokens: 1, outputTokens: 1 }, { inputTokens: 1, outputTokens: 1, searchUnits: 2, videoSeconds: 4 }))
      .toEqual({ inputTokens: 2, outputTokens: 2, searchUnits: 2, videoSeconds: 4 });
    expect(addUsage(undefined, turn1)).toEqual(turn1);
    expect(addUsage(turn1, undefined)).toBe(turn1);
  });

  it("the wire usage sums every count in its details, cache writes included", () => {
    const u = (i: number, cached: number, written: number, reasoning: number) => ({
      input_tokens: i, output_tokens: 10, total_tokens: i + 10,
      input_tokens_details: { cached_tokens: cached, cache_write_tokens: written }, output_tokens_details: { reasoning_tokens: reasoning },
    });
    expect(addWireUsage(u(100, 20, 30, 4), u(200, 40, 50, 6))).toEqual({
      input_tokens: 300, output_tokens: 20, total_tokens: 320,
      input_tokens_details: { cached_tokens: 60, cache_write_tokens: 80 }, output_tokens_details: { reasoning_tokens: 10 },
    });
  });
});
