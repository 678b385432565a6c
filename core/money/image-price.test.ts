import { describe, expect, it } from "vitest";
import { costParts } from "./money.ts";
import { pricesTier, pricingAtDearestTier, pricingForTier } from "./image-price.ts";

const dalle = { image: "0.04", image_tiers: { standard: { "1024x1024": "0.04", "1792x1024": "0.08" }, hd: { "1024x1024": "0.08", "1792x1024": "0.12" } } };

describe("image price tiers", () => {
  it("bills an image at the tier it was sent with, the flat image price without tiers", () => {
    expect(costParts({ inputTokens: 0, outputTokens: 0, images: 1 }, pricingForTier(dalle, { quality: "hd", size: "1792x1024" })).usd).toBe("0.12");
    expect(costParts({ inputTokens: 0, outputTokens: 0, images: 3 }, pricingForTier(dalle, { quality: "standard", size: "1792x1024" })).usd).toBe("0.24");
    const flat = { image: "0.02" };
    expect(pricingForTier(flat, { quality: "hd", size: "1792x1024" })).toBe(flat);
    // one object per tier, so per-pricing caches stay warm
    expect(pricingForTier(dalle, { quality: "hd", size: "1024x1024" })).toBe(pricingForTier(dalle, { quality: "hd", size: "1024x1024" }));
  });

  it("knows which tiers an endpoint prices, and its dearest", () => {
    expect(pricesTier(dalle, { quality: "hd", size: "1024x1024" })).toBe(true);
    expect(pricesTier(dalle, { quality: "hd", size: "512x512" })).toBe(false);
    expect(pricesTier(dalle, { quality: "toString", size: "1024x1024" })).toBe(false);
    expect(pricesTier(dalle, { size: "1024x1024" })).toBe(false);
    expect(pricesTier({ image: "0.02" }, {})).toBe(true);
    expect(pricingAtDearestTier(dalle).image).toBe("0.12");
  });
});
