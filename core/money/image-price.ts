// Per-image prices by quality and size (pricing.image_tiers: quality -> size -> USD). Providers bill an image by the
// size and quality it is generated at (dall-e-3 hd 1792x1024 is 3x standard 1024x1024), so an image request is billed
// and reserved at the tier it is sent with; `image` stays the price of an endpoint that lists no tiers.
import Big from "big.js";
import type { Pricing } from "../generated/types/gateway.ts";

/** The size and quality an image request is sent upstream with (either may be left to the provider). */
export interface ImageTier {
  size?: string;
  quality?: string;
}

/** The tier's own listed price, else undefined (no tiers, or not this one). */
export function tierPrice(pricing: Pricing, tier: ImageTier): string | undefined {
  if (tier.quality === undefined || tier.size === undefined) return undefined;
  const bySize = pricing.image_tiers && Object.hasOwn(pricing.image_tiers, tier.quality) ? pricing.image_tiers[tier.quality] : undefined;
  return bySize && Object.hasOwn(bySize, tier.size) ? bySize[tier.size] : undefined;
}

/** Whether the endpoint has a price for this tier: its flat `image` price when it lists no tiers, else a listed one. */
export const pricesTier = (pricing: Pricing, tier: ImageTier): boolean => !pricing.image_tiers || tierPrice(pricing, tier) !== undefined;

const tiered = new WeakMap<Pricing, Map<string, Pricing>>();

/**
 * The endpoint's prices with `image` at this tier's price: what a request sent at that tier is billed. One object per
 * (pricing, tier), so the per-pricing caches of money.ts and the budget keep working.
 */
export function pricingForTier(pricing: Pricing, tier: ImageTier): Pricing {
  const price = tierPrice(pricing, tier);
  if (price === undefined || price === pricing.image) return pricing;
  let byTier = tiered.get(pricing);
  if (!byTier) tiered.set(pricing, (byTier = new Map()));
  const key = `${tier.quality}@${tier.size}`;
  let p = byTier.get(key);
  if (!p) byTier.set(key, (p = { ...pricing, image: price }));
  return p;
}

const dearestMemo = new WeakMap<Pricing, Pricing>();

/** The endpoint's prices with `image` at the dearest price it bills an image at (any tier, or `image`). */
export function pricingAtDearestTier(pricing: Pricing): Pricing {
  let p = dearestMemo.get(pricing);
  if (p) return p;
  let dearest = pricing.image;
  for (const bySize of Object.values(pricing.image_tiers ?? {})) {
    for (const price of Object.values(bySize)) if (dearest === undefined || new Big(price).gt(dearest)) dearest = price;
  }
  p = dearest === pricing.image ? pricing : { ...pricing, image: dearest };
  dearestMemo.set(pricing, p);
  return p;
}
