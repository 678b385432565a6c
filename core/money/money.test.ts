import { describe, expect, it } from "vitest";
import Big from "big.js";
import { costOf, costParts, picoToUsd, toPico, usdString } from "./money.ts";

describe("money", () => {
  it("prices tokens exactly, with no binary float drift", () => {
    const pricing = { input: "0.00000015", output: "0.0000006", input_cache_read: "0.000000075" };
    const c = costOf({ inputTokens: 3, outputTokens: 7, cacheReadTokens: 1 }, pricing);
    expect(usdString(c)).toBe("0.000004725");
    // 0.1 + 0.2 style drift never appears: a million tiny costs add up exactly.
    let total = 0n;
    for (let i = 0; i < 1000; i++) total += toPico(costOf({ inputTokens: 1, outputTokens: 0 }, { input: "0.0000001" }));
    expect(picoToUsd(total)).toBe("0.0001");
  });

  it("audio input and cached audio are billed at their own prices, the rest at text's; unset, at input and the cache read price", () => {
    const flash = { input: "0.0000003", input_audio: "0.000001", output: "0.0000025", input_cache_read: "0.00000003", input_cache_read_audio: "0.0000001" };
    const u = { inputTokens: 40_000, audioInputTokens: 39_990, cacheReadTokens: 60_000, cacheReadAudioTokens: 60_000, outputTokens: 20 };
    expect(costParts(u, flash).usd).toBe("0.046043");
    expect(usdString(costOf(u, flash))).toBe("0.046043");
    expect(costParts(u, { input: "0.0000003", output: "0.0000025", input_cache_read: "0.00000003" }).usd).toBe("0.01385");
    // An audio count above its total (usage not from a parser) bills no token twice.
    expect(costParts({ inputTokens: 10, audioInputTokens: 50, outputTokens: 0 }, flash).usd).toBe("0.00001");
  });

  it("cache prices fall back to the input price; units are billed by their own price", () => {
    expect(usdString(costOf({ inputTokens: 0, outputTokens: 0, cacheWriteTokens: 10 }, { input: "0.000001" }))).toBe("0.00001");
    expect(usdString(costOf({ inputTokens: 0, outputTokens: 0, images: 2, searchUnits: 1 }, { image: "0.04", search_unit: "0.002" }))).toBe("0.082");
    expect(usdString(costOf({ inputTokens: 100, outputTokens: 0, webSearches: 20 }, { input: "0.000003", web_search: "0.01" }))).toBe("0.2003");
  });

  it("converts to pico-USD rounding up, and back", () => {
    expect(toPico("0.000000075")).toBe(75000n);
    expect(toPico(new Big("1e-13"))).toBe(1n);
    expect(picoToUsd(1_500_000n)).toBe("0.0000015");
    expect(picoToUsd(0n)).toBe("0");
    expect(picoToUsd(12_000_000_000_000n)).toBe("12");
  });

  it("parses a pricing object's prices once and keeps each object's own", () => {
    const a = { input: "0.000001", output: "0.000002" };
    const b = { input: "0.000003", output: "0.000004" };
    const u = { inputTokens: 10, outputTokens: 5 };
    expect(usdString(costOf(u, a))).toBe("0.00002");
    expect(usdString(costOf(u, b))).toBe("0.00005");
    expect(usdString(costOf(u, a))).toBe("0.00002");
    expect(usdString(costOf({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 4 }, a))).toBe("0.000004");
  });
});

describe("costParts (integer math)", () => {
  const cases: [Parameters<typeof costParts>[0], Parameters<typeof costParts>[1]][] = [
    [{ inputTokens: 3, outputTokens: 7, cacheReadTokens: 1 }, { input: "0.00000015", output: "0.0000006", input_cache_read: "0.000000075" }],
    [{ inputTokens: 0, outputTokens: 0 }, {}],
    [{ inputTokens: 0, outputTokens: 0, cacheWriteTokens: 10 }, { input: "0.000001" }],
    [{ inputTokens: 0, outputTokens: 0, images: 2, searchUnits: 1 }, { image: "0.04", search_unit: "0.002" }],
    [{ inputTokens: 7, outputTokens: 2, webSearches: 3 }, { input: "0.000003", output: "0.000015", web_search: "0.01" }],
    [{ inputTokens: 123456, outputTokens: 7890 }, { input: "3", output: "15" }],
    [{ inputTokens: 1, outputTokens: 1 }, { input: "1e-15", output: "0.0000000000000025" }], // finer than a pico: rounds up
    [{ inputTokens: 10, outputTokens: 0, videoSeconds: 2.5 }, { input: "0.000001", video_second: "0.1" }], // fractional: Big path
    [{ inputTokens: 5, outputTokens: 3 }, { input: "0.5", output: "10" }],
  ];
  it.each(cases)("matches the Big computation exactly (%j at %j)", (usage, pricing) => {
    const big = costOf(usage, pricing);
    expect(costParts(usage, pricing)).toEqual({ usd: usdString(big), pico: toPico(big) });
  });

  it("gives the exact decimal and the pico rounding up", () => {
    expect(costParts({ inputTokens: 3, outputTokens: 7, cacheReadTokens: 1 }, { input: "0.00000015", output: "0.0000006", input_cache_read: "0.000000075" }))
      .toEqual({ usd: "0.000004725", pico: 4_725_000n });
    expect(costParts({ inputTokens: 1, outputTokens: 0 }, { input: "1e-15" })).toEqual({ usd: "0.000000000000001", pico: 1n });
    expect(costParts({ inputTokens: 2, outputTokens: 0 }, { input: "1.5" })).toEqual({ usd: "3", pico: 3_000_000_000_000n });
  });

  it("1-hour cache writes at input_cache_write_1h; unset, 2x input where writes carry a premium, else the write price", () => {
    const u = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 100, cacheWrite1hTokens: 60 };
    // 40 at the 5-minute price, 60 at the 1-hour one.
    expect(costParts(u, { input: "0.000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.000007" }).usd).toBe("0.00057");
    expect(costParts(u, { input: "0.000003", input_cache_write: "0.00000375" }).usd).toBe("0.00051");
    expect(usdString(costOf(u, { input: "0.000003", input_cache_write: "0.00000375" }))).toBe("0.00051");
    // No write premium (free writes, or none priced): a 1-hour write costs what a 5-minute one does.
    expect(costParts(u, { input: "0.000003", input_cache_write: "0" }).usd).toBe("0");
    expect(costParts(u, { input: "0.000003" }).usd).toBe("0.0003");
    // A 1-hour count above the total is billed whole.
    expect(costParts({ inputTokens: 0, outputTokens: 0, cacheWrite1hTokens: 10 }, { input: "0.000003", input_cache_write: "0.00000375" }).usd).toBe("0.00006");
  });
});

