import { describe, expect, it } from "vitest";
import { fromGeminiUsage, geminiToOpenAIUsage } from "./response.ts";
import { costParts } from "../../../core/money/money.ts";

// A googleSearch-grounded answer: the search results the model read are toolUsePromptTokenCount, apart from
// promptTokenCount (totalTokenCount = prompt + tool use + candidates), and billed as input.
const GROUNDED = { promptTokenCount: 1000, toolUsePromptTokenCount: 20_000, candidatesTokenCount: 500, totalTokenCount: 21_500 };
const FLASH = { input: "0.0000003", output: "0.0000025" };

describe("Gemini usage", () => {
  it("bills tool-use prompt tokens as input: $0.00755, not $0.00155", () => {
    const u = fromGeminiUsage(GROUNDED);
    expect(u).toEqual({ inputTokens: 21_000, outputTokens: 500 });
    expect(costParts(u, FLASH).usd).toBe("0.00755");
  });

  it("cached tokens come out of promptTokenCount only, tool-use tokens are added beside them", () => {
    expect(fromGeminiUsage({ ...GROUNDED, cachedContentTokenCount: 600, thoughtsTokenCount: 50 })).toEqual({ inputTokens: 20_400, outputTokens: 550, cacheReadTokens: 600, reasoningTokens: 50 });
  });

  it("a chat client's prompt_tokens count them too", () => {
    expect(geminiToOpenAIUsage(GROUNDED)).toMatchObject({ prompt_tokens: 21_000, completion_tokens: 500, total_tokens: 21_500 });
  });
});
