// The size and quality an image request is sent with. The catalog prices one tier per image (`pricing.image`), and
// a model's `limits.sizes` / `limits.qualities` list the values that price holds for: any other value (dall-e-3
// "hd", gpt-image "high" or a larger size) costs more upstream than the gateway bills and the budget reserves, so it
// is refused before any upstream call; and a request that names none is sent the first listed value, so the provider
// cannot pick a dearer default (gpt-image's "auto"). Every model the request may fall back to is held to the same.
import { GatewayError } from "../errors.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import { limitsOf } from "./media.ts";

export interface ImageTier {
  size?: string;
  quality?: string;
}

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
      throw new GatewayError(400, "BAD_REQUEST", `${field} ${String(value)}${why} is not supported by ${m.id}: its price covers ${supported.join(", ")}`, {
        details: { field, supported, model: m.id },
      });
    }
    tier[field] = String(value);
  }
  return tier;
}
