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

const price = (p: string | undefined, fallback?: string): Big => new Big(p ?? fallback ?? "0");

/** The cost of one request's usage at one endpoint's prices. Cache prices default to the input price. */
export function costOf(usage: Usage, pricing: Pricing): Big {
  let c = price(pricing.input).times(usage.inputTokens || 0);
  c = c.plus(price(pricing.output).times(usage.outputTokens || 0));
  if (usage.cacheReadTokens) c = c.plus(price(pricing.input_cache_read, pricing.input).times(usage.cacheReadTokens));
  if (usage.cacheWriteTokens) c = c.plus(price(pricing.input_cache_write, pricing.input).times(usage.cacheWriteTokens));
  if (usage.images) c = c.plus(price(pricing.image).times(usage.images));
  if (usage.videoSeconds) c = c.plus(price(pricing.video_second).times(usage.videoSeconds));
  if (usage.searchUnits) c = c.plus(price(pricing.search_unit).times(usage.searchUnits));
  return c;
}

/** Plain decimal string of a Big, no exponent ("0.00000015"). */
export const usdString = (b: Big): string => {
  const s = b.toFixed(Math.max(0, -b.e + (b.c.length - 1)));
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
};
