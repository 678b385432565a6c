import { describe, expect, it } from "vitest";
import { MAX_USAGE_TOKENS, MAX_USAGE_UNITS, saneUsage } from "./sane-usage.ts";
import { costParts } from "../money/money.ts";

describe("saneUsage", () => {
  it("keeps ordinary figures as they are (the same object, nothing to log)", () => {
    const u = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, videoSeconds: 2.5 };
    expect(saneUsage(u)).toEqual({ usage: u, fixes: [] });
    expect(saneUsage(u).usage).toBe(u);
  });

  it("caps absurd counts, so the cost fits the ledger's 64-bit pico-USD column", () => {
    const { usage, fixes } = saneUsage({ inputTokens: 1e20, outputTokens: 5, images: 1e15, webSearches: 1e300 });
    expect(usage).toEqual({ inputTokens: MAX_USAGE_TOKENS, outputTokens: 5, images: MAX_USAGE_UNITS, webSearches: MAX_USAGE_UNITS });
    expect(fixes.map((f) => f.field)).toEqual(["inputTokens", "images", "webSearches"]);
    const cost = costParts(usage, { input: "0.00015", output: "0.0006", image: "0.2", web_search: "0.03" });
    expect(cost.pico).toBeLessThan(2n ** 63n);
  });

  it("reads negative and non-finite counts as missing (0: the meter estimates), never as a credit", () => {
    const { usage, fixes } = saneUsage({ inputTokens: Number.NaN, outputTokens: -100000, cacheReadTokens: -Infinity, reasoningTokens: Infinity });
    expect(usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(fixes).toEqual([
      { field: "inputTokens", reported: Number.NaN, billed: undefined },
      { field: "outputTokens", reported: -100000, billed: undefined },
      { field: "cacheReadTokens", reported: -Infinity, billed: undefined },
      { field: "reasoningTokens", reported: Infinity, billed: undefined },
    ]);
    expect(costParts(saneUsage({ inputTokens: 10, outputTokens: -100000 }).usage, { input: "0.00001", output: "0.00001" }).usd).toBe("0.0001");
  });

  it("rounds fractional token counts up (whole tokens, erring high as the gateway's estimates do)", () => {
    expect(saneUsage({ inputTokens: 10.2, outputTokens: 3 }).usage).toEqual({ inputTokens: 11, outputTokens: 3 });
  });
});

describe("saneUsage within a request's ceiling", () => {
  it("bills no more than the context window of input (cache included) and the output limit", () => {
    const { usage, fixes } = saneUsage({ inputTokens: 1e308, outputTokens: 1e308, cacheReadTokens: 500, reasoningTokens: 1e300 }, { input: 1000, output: 50 });
    expect(usage).toEqual({ inputTokens: 1000, outputTokens: 50, cacheReadTokens: 0, reasoningTokens: 50 });
    expect(fixes.map((f) => f.field)).toEqual(["inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"]);
  });

  it("leaves figures within the ceiling as reported", () => {
    const u = { inputTokens: 400, outputTokens: 50, cacheReadTokens: 600 };
    expect(saneUsage(u, { input: 1000, output: 50 })).toEqual({ usage: u, fixes: [] });
  });
});
