// Long-prompt price tiers (pricing.long_context): Gemini 2.5 Pro bills a prompt over 200k tokens, and Claude Sonnet
// 4 / 4.5 with the 1M context an input over 200k tokens, whole at dearer prices — its output too. Billing, the
// budget's reservation and routing by cost all pick the prices here, so none of them under-counts a long request.
import type { Pricing } from "../generated/types/gateway.ts";
import type { Usage } from "../contracts/provider.ts";

const count = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

/** A request's prompt as providers judge the threshold: uncached input, cache reads and cache writes together. */
export function promptTokens(usage: Usage): number {
  return count(usage.inputTokens) + count(usage.cacheReadTokens) + count(usage.cacheWriteTokens);
}

/** Each pricing's tier prices merged over its own, made once (the merged object is what cost caches key on). */
const tiered = new WeakMap<Pricing, Pricing>();

function tierPricing(pricing: Pricing): Pricing {
  let t = tiered.get(pricing);
  if (!t) {
    const { long_context, ...base } = pricing;
    const { above_input_tokens: _, ...prices } = long_context!;
    // A price the tier leaves out keeps the base's; an unset cache price stays unset, so it is the tier's input.
    t = { ...base, ...prices };
    tiered.set(pricing, t);
  }
  return t;
}

/** The prices a request with a prompt of `prompt` tokens is billed at: the tier's when it is over the threshold. */
export function pricingForPrompt(pricing: Pricing, prompt: number): Pricing {
  const tier = pricing.long_context;
  return tier && prompt > tier.above_input_tokens ? tierPricing(pricing) : pricing;
}

/** The prices `usage` is billed at (pricingForPrompt on its prompt tokens). */
export function pricingForUsage(usage: Usage, pricing: Pricing): Pricing {
  return pricing.long_context ? pricingForPrompt(pricing, promptTokens(usage)) : pricing;
}
