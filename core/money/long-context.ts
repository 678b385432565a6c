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

/** Each pricing without its tier: prices the tier's threshold can no longer switch (made once, as tierPricing). */
const untiered = new WeakMap<Pricing, Pricing>();

function basePricing(pricing: Pricing): Pricing {
  let b = untiered.get(pricing);
  if (!b) {
    const { long_context: _, ...base } = pricing;
    untiered.set(pricing, (b = base));
  }
  return b;
}

type Counts = Record<string, number | undefined>;

/**
 * The parts of a request's billed usage and the prices each is billed at. A request of several model calls (the
 * Responses mcp loop: `calls`, each call's usage as its upstream reported it) is billed as the provider bills each
 * call: the calls over the threshold at the tier's prices, the rest at the base — never the sum judged as one prompt.
 * What `usage` holds beyond the calls (the estimate for a call cut before its usage) is judged as a call of its own;
 * a count `usage` caps below the calls' is billed at most as `usage` says.
 */
export function pricedParts(usage: Usage, pricing: Pricing, calls?: readonly Usage[]): Array<{ usage: Usage; pricing: Pricing }> {
  const tier = pricing.long_context;
  if (!tier || !calls?.length) return [{ usage, pricing: pricingForUsage(usage, pricing) }];
  const over: Counts = {};
  let any = false;
  for (const call of [...calls, beyond(usage, calls)]) {
    if (promptTokens(call) <= tier.above_input_tokens) continue;
    any = true;
    for (const [k, v] of Object.entries(call)) if (typeof v === "number" && v > 0) over[k] = (over[k] ?? 0) + v;
  }
  if (!any) return [{ usage, pricing: basePricing(pricing) }];
  const long: Counts = {}, rest: Counts = { ...(usage as unknown as Counts) };
  for (const [k, v] of Object.entries(usage)) {
    if (typeof v !== "number") continue;
    const l = Math.min(over[k] ?? 0, Math.max(0, v));
    long[k] = l;
    rest[k] = v - l;
  }
  return [
    { usage: { inputTokens: 0, outputTokens: 0, ...long } as Usage, pricing: tierPricing(pricing) },
    { usage: rest as unknown as Usage, pricing: basePricing(pricing) },
  ];
}

/** What `usage` holds beyond the sum of `calls`, count by count (none where the calls hold as much or more). */
function beyond(usage: Usage, calls: readonly Usage[]): Usage {
  const left: Counts = { ...(usage as unknown as Counts) };
  for (const call of calls) for (const [k, v] of Object.entries(call)) if (typeof v === "number") left[k] = Math.max(0, (left[k] ?? 0) - v);
  return left as unknown as Usage;
}
