// The size and quality an image request is sent with. A model's `limits.sizes` / `limits.qualities` list the values
// it serves, and its endpoints price each quality and size together (`pricing.image_tiers`, else one flat
// `pricing.image`): a value outside the limits, or a combination an endpoint prices no tier for (billing would fall
// back to a cheaper price than the provider charges), is refused before any upstream call; and a request that names
// none is sent the first listed value, so the provider cannot pick a dearer default (gpt-image's "auto"). Every model
// the request may fall back to is held to the same.
import { GatewayError } from "../errors.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import type { Pricing } from "../generated/types/gateway.ts";
import { pricesTier, type ImageTier } from "../money/image-price.ts";
import { limitsOf } from "./media.ts";

export type { ImageTier };

const FIELDS = [["size", "sizes"], ["quality", "qualities"]] as const;

/** `models`: the requested model, then its fallbacks. Throws 400 BAD_REQUEST naming the field. */
export function imageTier(models: ModelRuntime[], body: { size?: string; quality?: string }): ImageTier {
  const tier: ImageTier = {};
  for (const [field, key] of FIELDS) {
    const listed = (m: ModelRuntime): unknown[] | undefined => (Array.isArray(limitsOf(m)[key]) ? limitsOf(m)[key] : undefined);
    const asked = body[field];
    const value = asked ?? models.map(listed).find((l) => l?.length)?.[0];
    if (value === undefined) continue;
    for (const m of models) {
      const supported = listed(m);
      if (!supported || supported.includes(value)) continue;
      const why = asked === undefined ? ` (sent when the request names no ${field})` : "";
      throw new GatewayError(400, "BAD_REQUEST", `${field} ${String(value)}${why} is not supported by ${m.id}: it serves ${supported.join(", ")}`, {
        details: { field, supported, model: m.id },
      });
    }
    tier[field] = String(value);
  }
  for (const m of models) for (const ep of m.endpoints) if (!pricesTier(ep.pricing, tier)) throw unpriced(m, ep.pricing, tier);
  return tier;
}

/** 400 for a quality and size no tier prices: names the size when the quality is priced at other sizes, else the quality. */
function unpriced(m: ModelRuntime, pricing: Pricing, tier: ImageTier): GatewayError {
  const tiers = pricing.image_tiers ?? {};
  const sizes = tier.quality !== undefined && Object.hasOwn(tiers, tier.quality) ? Object.keys(tiers[tier.quality]!) : undefined;
  const field = sizes ? "size" : "quality";
  const supported = sizes ?? Object.keys(tiers).filter((q) => tier.size === undefined || Object.hasOwn(tiers[q]!, tier.size));
  const at = field === "size" ? `quality ${tier.quality}` : `size ${tier.size ?? "(none)"}`;
  const message = `quality ${tier.quality ?? "(none)"} at size ${tier.size ?? "(none)"} is not priced for ${m.id}: at ${at} it prices ${field} ${supported.join(", ") || "(none)"}`;
  return new GatewayError(400, "BAD_REQUEST", message, {
    details: { field, supported, model: m.id },
  });
}
