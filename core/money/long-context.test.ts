// What a long request costs where a provider bills long prompts at a dearer tier (pricing.long_context): at, just
// under and just over the threshold, for each token class that counts toward it.
import { describe, expect, it } from "vitest";
import type { Pricing } from "../generated/types/gateway.ts";
import type { Usage } from "../contracts/provider.ts";
import { costOf, costParts, toPico, usdString } from "./money.ts";
import { pricingForPrompt } from "./long-context.ts";

// Gemini 2.5 Pro as published: $1.25 / $10 / $0.125 per million up to 200k prompt tokens, $2.50 / $15 / $0.25 above.
const GEMINI_PRO: Pricing = {
  input: "0.00000125", output: "0.00001", input_cache_read: "0.000000125",
  long_context: { above_input_tokens: 200_000, input: "0.0000025", output: "0.000015", input_cache_read: "0.00000025" },
};
// Claude Sonnet 4.5 with the 1M context: $3 / $15 (writes $3.75, 1h $6, reads $0.30) up to 200k input tokens, then
// $6 / $22.50 (writes $7.50, 1h $12, reads $0.60).
const SONNET: Pricing = {
  input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.000006",
  long_context: { above_input_tokens: 200_000, input: "0.000006", output: "0.0000225", input_cache_read: "0.0000006", input_cache_write: "0.0000075", input_cache_write_1h: "0.000012" },
};

/** Both cost paths (integer and Big) must agree; the ledger's decimal string. */
function cost(usage: Usage, pricing: Pricing, calls?: Usage[]): string {
  const parts = costParts(usage, pricing, calls);
  expect(usdString(costOf(usage, pricing, calls))).toBe(parts.usd);
  expect(parts.pico).toBe(toPico(parts.usd));
  return parts.usd;
}

describe("a long-prompt tier", () => {
  it("uncached input: 199,999 and 200,000 prompt tokens at the base prices, 200,001 at the tier's, output too", () => {
    expect(cost({ inputTokens: 199_999, outputTokens: 1000 }, GEMINI_PRO)).toBe("0.25999875"); // 199999 x 1.25e-6 + 1000 x 1e-5
    expect(cost({ inputTokens: 200_000, outputTokens: 1000 }, GEMINI_PRO)).toBe("0.26");
    expect(cost({ inputTokens: 200_001, outputTokens: 1000 }, GEMINI_PRO)).toBe("0.5150025"); // 200001 x 2.5e-6 + 1000 x 1.5e-5
  });

  it("cache reads count toward the threshold and are billed at the tier's read price over it", () => {
    expect(cost({ inputTokens: 100_000, outputTokens: 0, cacheReadTokens: 100_000 }, GEMINI_PRO)).toBe("0.1375");
    // One more cached token tips the whole request over: 100000 x 2.5e-6 + 100001 x 2.5e-7.
    expect(cost({ inputTokens: 100_000, outputTokens: 0, cacheReadTokens: 100_001 }, GEMINI_PRO)).toBe("0.27500025");
    expect(cost({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 200_001 }, GEMINI_PRO)).toBe("0.05000025");
  });

  it("cache writes (5-minute and 1-hour) count toward the threshold and are billed at the tier's write prices over it", () => {
    const at = { inputTokens: 50_000, outputTokens: 2000, cacheReadTokens: 50_000, cacheWriteTokens: 100_000, cacheWrite1hTokens: 40_000 };
    // 50000 x 3e-6 + 2000 x 1.5e-5 + 50000 x 3e-7 + 60000 x 3.75e-6 + 40000 x 6e-6
    expect(cost(at, SONNET)).toBe("0.66");
    // 50000 x 6e-6 + 2000 x 2.25e-5 + 50000 x 6e-7 + 60001 x 7.5e-6 + 40000 x 1.2e-5
    expect(cost({ ...at, cacheWriteTokens: 100_001 }, SONNET)).toBe("1.3050075");
    expect(cost({ inputTokens: 0, outputTokens: 0, cacheWriteTokens: 200_001 }, SONNET)).toBe("1.5000075");
  });

  it("a price the tier leaves out keeps the base's; an unset cache price is the tier's input", () => {
    const p: Pricing = { input: "0.000001", output: "0.000002", input_cache_read: "0.0000001", web_search: "0.01", long_context: { above_input_tokens: 10, input: "0.000004" } };
    expect(cost({ inputTokens: 11, outputTokens: 5, cacheReadTokens: 10, webSearches: 1 }, p)).toBe("0.010055"); // 11 x 4e-6 + 5 x 2e-6 + 10 x 1e-7 + 0.01
    const noCache: Pricing = { input: "0.000001", long_context: { above_input_tokens: 10, input: "0.000004" } };
    expect(cost({ inputTokens: 1, outputTokens: 0, cacheReadTokens: 5, cacheWriteTokens: 5 }, noCache)).toBe("0.000044");
  });

  it("a pricing without a tier is unchanged at any prompt size", () => {
    const flat: Pricing = { input: "0.00000125", output: "0.00001" };
    expect(cost({ inputTokens: 900_000, outputTokens: 1000 }, flat)).toBe("1.135");
    expect(pricingForPrompt(flat, 900_000)).toBe(flat);
  });
});

describe("a request of several model calls (the Responses mcp loop): the tier is judged on each call's prompt", () => {
  const turn = { inputTokens: 110_000, outputTokens: 100 };
  const both = { inputTokens: 220_000, outputTokens: 200 };

  it("two 110k-token calls are each under 200k: billed at the base prices, as Google bills each call", () => {
    // 2 x (110000 x 1.25e-6 + 100 x 1e-5), not 220000 x 2.5e-6 + 200 x 1.5e-5 = 0.553.
    expect(cost(both, GEMINI_PRO, [turn, turn])).toBe("0.277");
  });

  it("a call over the threshold is billed at the tier, the others at the base", () => {
    const long = { inputTokens: 250_000, outputTokens: 100, cacheReadTokens: 1000 };
    const short = { inputTokens: 10_000, outputTokens: 100 };
    // 250000 x 2.5e-6 + 100 x 1.5e-5 + 1000 x 2.5e-7, then 10000 x 1.25e-6 + 100 x 1e-5
    expect(cost({ inputTokens: 260_000, outputTokens: 200, cacheReadTokens: 1000 }, GEMINI_PRO, [long, short])).toBe("0.64025");
  });

  it("what the billed usage holds beyond the calls' (a cut last call's estimate) is at the base; above it, never more than billed", () => {
    // The calls say 110k + 110k; the bill adds 5000 estimated output tokens at $10 per million.
    expect(cost({ inputTokens: 220_000, outputTokens: 5200 }, GEMINI_PRO, [turn, turn])).toBe("0.327");
    // A call over the threshold whose figures were capped: the tier applies to what was billed of it.
    expect(cost({ inputTokens: 150_000, outputTokens: 100 }, GEMINI_PRO, [{ inputTokens: 300_000, outputTokens: 100 }, turn])).toBe("0.3765");
  });

  it("a cut call's estimate beside one settled call is judged as a call of its own, not summed with it", () => {
    // 150k settled + a cut turn's 100 058 estimated: each under 200k, all at the base (not 250 058 at the tier: 0.625).
    expect(cost({ inputTokens: 250_058, outputTokens: 20 }, GEMINI_PRO, [{ inputTokens: 150_000, outputTokens: 20 }])).toBe("0.3127725");
    // The estimate itself over the threshold: it alone at the tier's input price.
    expect(cost({ inputTokens: 260_000, outputTokens: 100 }, GEMINI_PRO, [{ inputTokens: 10_000, outputTokens: 100 }])).toBe("0.6385");
  });

  it("one call, or none listed: the request's own prompt decides, as before", () => {
    expect(cost(both, GEMINI_PRO, [both])).toBe("0.553");
    expect(cost(both, GEMINI_PRO)).toBe("0.553");
  });
});
