// What a 402 says about the price and amounts it reserved with. The review: "at $6 per million tokens, its cache-write
// price (input_cache_write_1h)" for a model whose pricing sets no input_cache_write_1h (the gateway made it: twice
// input), so the operator looked for a price they had never configured; and round amounts written "$1".
import { describe, expect, it } from "vitest";
import { worstCase } from "./worst-case.ts";
import { budgetRefusal } from "./refusal.ts";
import { toPico } from "../../core/money/money.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

function ctx(pricing: Record<string, string>, body: unknown): GatewayContext {
  const ep = { provider: "p", upstreamModel: "m", pricing, maxTokens: 100, contextWindow: 1_000_000 };
  const models = new Map<string, any>([["a/m", { id: "a/m", type: "language", config: {}, endpoints: [ep] }]]);
  return { endpoint: "chat", body, headers: { "content-length": "200" }, config: { models, raw: {} } } as unknown as GatewayContext;
}

/** A chat request naming an image by URL: its input is reserved up to the context window, at the dearest input price. */
const byUrl = { model: "a/m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "What is it?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] };

/** The refusal of that request against a $1 monthly budget with nothing spent. */
function refuse(pricing: Record<string, string>) {
  const c = ctx(pricing, byUrl);
  const w = worstCase(c);
  return budgetRefusal({
    project: "acme", usd: "1", period: "month", periodStart: Date.UTC(2025, 0, 1), limitPico: toPico("1"), spentPico: 0n, reservedPico: 0n,
    amountPico: w.pico, withoutOutputPico: w.withoutOutputPico, inputPrice: w.inputPrice,
  }, c);
}

describe("the input price a budget refusal names", () => {
  it("a 1-hour write price the pricing does not set: named as made from input, with details saying so", () => {
    const e = refuse({ input: "0.000003", input_cache_write: "0.00000375", output: "0.000015" });
    expect(e.message).toContain("at $6.00 per million tokens, its cache-write price (input_cache_write_1h, not configured: twice input)");
    expect(e.details).toMatchObject({ input_price_per_million: "6", input_price_key: "input_cache_write_1h", input_price_derived_from: "input" });
  });

  it("a configured 1-hour write price: named as it is, nothing said of a derivation", () => {
    const e = refuse({ input: "0.000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.000006", output: "0.000015" });
    expect(e.message).toContain("at $6.00 per million tokens, its cache-write price (input_cache_write_1h): how much");
    expect(e.details).not.toHaveProperty("input_price_derived_from");
  });

  it("a configured 5-minute write price that is the dearest: named as it is", () => {
    const e = refuse({ input: "0.000003", input_cache_write: "0.000007", output: "0.000015" });
    expect(e.message).toContain("at $7.00 per million tokens, its cache-write price (input_cache_write): how much");
    expect(e.details).toMatchObject({ input_price_key: "input_cache_write" });
    expect(e.details).not.toHaveProperty("input_price_derived_from");
  });
});

describe("the amounts a budget refusal writes", () => {
  it("round amounts with their cents, finer ones with every digit", () => {
    const e = refuse({ input: "0.000003", input_cache_write: "0.00000375", output: "0.000015" });
    // 1 000 000 tokens at $6/M and 10 output at $15/M: $6.00015 against a $1 budget.
    expect(e.message).toMatch(/^Project "acme" has \$1\.00 left of its monthly budget of \$1\.00 \(spent \$0\.00\), less than this request may cost \(\$6\.00015 at most\), \$6\.00 of it for input: /);
    // The details stay plain decimals, as scripts read them.
    expect(e.details).toMatchObject({ budget_usd: "1", spent_usd: "0", available_usd: "1", request_max_usd: "6.00015", input_max_usd: "6" });
  });
});
