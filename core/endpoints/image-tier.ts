// The size and quality an image request is sent with, worked out per target (each model of a fallback chain has its
// own tiers: dall-e-3 standard/hd, gpt-image-1 low/medium/high). A model's `limits.sizes` / `limits.qualities` list
// the values it serves, and its endpoints price each quality and size together (`pricing.image_tiers`, else one flat
// `pricing.image`). A target is sent the value the request names (OpenAI's `auto`, `hd` and `standard` as the listed
// value they stand for: ./image-tier-names.ts), else its model's first listed one, so the provider cannot pick a
// dearer default (gpt-image's own "auto"). A target whose model does not list a named value, or whose
// endpoint prices no tier for the combination (billing would fall back to a cheaper price than the provider
// charges), is left out of the chain; when no target is left the request is refused before any upstream call.
import { GatewayError } from "../errors.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import type { Pricing } from "../generated/types/gateway.ts";
import { pricesTier, type ImageTier } from "../money/image-price.ts";
import { limitsOf } from "./media.ts";
import { listedValue } from "./image-tier-names.ts";

export type { ImageTier };

/** What one target is sent, or the 400 BAD_REQUEST (naming the field) saying why it cannot serve the request. */
export type TierChoice = { tier: ImageTier; refused?: undefined } | { tier?: undefined; refused: GatewayError };

type Asked = { size?: string; quality?: string };

const FIELDS = [["size", "sizes"], ["quality", "qualities"]] as const;

/** The tier a model (undefined: unknown to the catalog, no limits) at an endpoint with these prices is sent. */
export function targetTier(m: ModelRuntime | undefined, pricing: Pricing | undefined, body: Asked): TierChoice {
  const tier: ImageTier = {};
  for (const [field, key] of FIELDS) {
    const l = m ? limitsOf(m)[key] : undefined;
    const listed: unknown[] | undefined = Array.isArray(l) && l.length ? l : undefined;
    const asked = body[field];
    // What the request names, as the model lists it (`auto`, `hd`: ./image-tier-names.ts), else the model's default.
    const value = asked === undefined ? listed?.[0] : listed ? listedValue(field, asked, listed) : asked;
    if (value === undefined && asked !== undefined) {
      return { refused: new GatewayError(400, "BAD_REQUEST", `${field} ${asked} is not supported by ${m!.id}: it serves ${listed!.join(", ")}`, {
        details: { field, supported: listed, model: m!.id },
      }) };
    }
    if (value !== undefined) tier[field] = String(value);
  }
  if (pricing && !pricesTier(pricing, tier)) return { refused: unpriced(m?.id ?? "", pricing, tier, body) };
  return { tier };
}

/**
 * The targets that can serve the request, each with its own tier, in order. Throws the first target's refusal when
 * none can (with no target at all, the requested model's own: its limits and endpoints still refuse with a 400).
 */
export function servingTiers<T extends { modelId: string; pricing: Pricing }>(
  targets: T[], modelOf: (id: string) => ModelRuntime | undefined, requested: ModelRuntime, body: Asked,
): { target: T; tier: ImageTier }[] {
  if (!targets.length) {
    // No provider of the model is configured (dispatch answers 502): what the model itself refuses is still a 400.
    const own = requested.endpoints.length ? requested.endpoints.map((ep) => targetTier(requested, ep.pricing, body)) : [targetTier(requested, undefined, body)];
    if (!own.some((c) => c.tier)) throw own[0]!.refused;
    return [];
  }
  const out: { target: T; tier: ImageTier }[] = [];
  let first: GatewayError | undefined;
  for (const target of targets) {
    const c = targetTier(modelOf(target.modelId), target.pricing, body);
    if (c.tier) out.push({ target, tier: c.tier });
    else first ??= c.refused;
  }
  if (!out.length) throw first!;
  return out;
}

/** 400 for a quality and size no tier prices: names the size when the quality is priced at other sizes, else the quality. */
function unpriced(model: string, pricing: Pricing, tier: ImageTier, body: Asked): GatewayError {
  const tiers = pricing.image_tiers ?? {};
  const sizes = tier.quality !== undefined && Object.hasOwn(tiers, tier.quality) ? Object.keys(tiers[tier.quality]!) : undefined;
  const field = sizes ? "size" : "quality";
  const supported = sizes ?? Object.keys(tiers).filter((q) => tier.size === undefined || Object.hasOwn(tiers[q]!, tier.size));
  const at = field === "size" ? `quality ${tier.quality}` : `size ${tier.size ?? "(none)"}`;
  const why = body[field] === undefined ? ` (${field} sent when the request names none)` : "";
  const message = `quality ${tier.quality ?? "(none)"} at size ${tier.size ?? "(none)"}${why} is not priced for ${model}: at ${at} it prices ${field} ${supported.join(", ") || "(none)"}`;
  return new GatewayError(400, "BAD_REQUEST", message, {
    details: { field, supported, model },
  });
}
