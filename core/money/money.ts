// Money: exact decimals (big.js) for prices and ledger costs, integer pico-USD (1e-12, BigInt) for counters.
// Never binary floats: a price such as 0.000000075 USD/token is exact in both forms.
import Big from "big.js";
import type { Pricing } from "../generated/types/gateway.ts";
import type { Usage } from "../contracts/provider.ts";

const PICO = new Big("1e12");

/** Decimal USD (string or Big) -> integer pico-USD, rounded up so counters never under-count. */
export function toPico(usd: Big | string): bigint {
  return BigInt(new Big(usd).times(PICO).round(0, Big.roundUp).toFixed(0));
}

/** Integer pico-USD -> plain decimal USD string ("0.0000015"), trailing zeros trimmed. */
export function picoToUsd(pico: bigint): string {
  return new Big(pico.toString()).div(PICO).toFixed(12).replace(/\.?0+$/, "") || "0";
}

/** An endpoint's prices as Big, parsed once per pricing object (Big values are immutable, so sharing them is safe). */
interface BigPrices { input: Big; output: Big; cacheRead: Big; cacheWrite: Big; image: Big; video: Big; search: Big }
const bigPrices = new WeakMap<Pricing, BigPrices>();

const price = (p: string | undefined, fallback?: string): Big => new Big(p ?? fallback ?? "0");

function pricesOf(pricing: Pricing): BigPrices {
  let b = bigPrices.get(pricing);
  if (!b) {
    b = {
      input: price(pricing.input), output: price(pricing.output),
      cacheRead: price(pricing.input_cache_read, pricing.input), cacheWrite: price(pricing.input_cache_write, pricing.input),
      image: price(pricing.image), video: price(pricing.video_second), search: price(pricing.search_unit),
    };
    bigPrices.set(pricing, b);
  }
  return b;
}

/** The cost of one request's usage at one endpoint's prices. Cache prices default to the input price. */
export function costOf(usage: Usage, pricing: Pricing): Big {
  const p = pricesOf(pricing);
  let c = p.input.times(usage.inputTokens || 0);
  c = c.plus(p.output.times(usage.outputTokens || 0));
  if (usage.cacheReadTokens) c = c.plus(p.cacheRead.times(usage.cacheReadTokens));
  if (usage.cacheWriteTokens) c = c.plus(p.cacheWrite.times(usage.cacheWriteTokens));
  if (usage.images) c = c.plus(p.image.times(usage.images));
  if (usage.videoSeconds) c = c.plus(p.video.times(usage.videoSeconds));
  if (usage.searchUnits) c = c.plus(p.search.times(usage.searchUnits));
  return c;
}

/** Plain decimal string of a Big, no exponent ("0.00000015"). */
export const usdString = (b: Big): string => {
  const s = b.toFixed(Math.max(0, -b.e + (b.c.length - 1)));
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
};
