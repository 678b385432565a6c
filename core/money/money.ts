// Money: exact decimals (big.js) for prices and ledger costs, integer pico-USD (1e-12, BigInt) for counters.
// Never binary floats: a price such as 0.000000075 USD/token is exact in both forms.
import Big from "big.js";
import type { Pricing } from "../generated/types/gateway.ts";
import type { Usage } from "../contracts/provider.ts";
import { pricedParts } from "./long-context.ts";

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
interface BigPrices { input: Big; inputAudio: Big; output: Big; cacheRead: Big; cacheReadAudio: Big; cacheWrite: Big; cacheWrite1h: Big; image: Big; video: Big; search: Big; webSearch: Big }
const bigPrices = new WeakMap<Pricing, BigPrices>();

const price = (p: string | undefined, fallback?: string): Big => new Big(p ?? fallback ?? "0");

/** The cache read and (5-minute) write prices charged, as decimal strings: each unset one is the input price. */
export function cachePrices(pricing: Pricing): { read: string; write: string } {
  return { read: pricing.input_cache_read ?? pricing.input ?? "0", write: pricing.input_cache_write ?? pricing.input ?? "0" };
}

/**
 * The price of a token written to the cache with the 1-hour TTL: input_cache_write_1h; unset, where cache writes cost
 * more than input (Anthropic's premium, on its API, Bedrock and Vertex alike) 2x input, never below the 5-minute write
 * price; else the write price (itself input when unset), as a provider without a write premium has none for 1 hour.
 */
export function cacheWrite1hPrice(pricing: Pricing): Big {
  return cacheWrite1h(pricing).price;
}

/** The configured price a derived one was made from, and by what factor (a refusal names it: the operator set no 1-hour price). */
export interface DerivedPrice { from: "input" | "input_cache_write"; times: 1 | 2 }

/** cacheWrite1hPrice, with where it came from when input_cache_write_1h is unset. */
export function cacheWrite1h(pricing: Pricing): { price: Big; derived?: DerivedPrice } {
  if (pricing.input_cache_write_1h !== undefined) return { price: new Big(pricing.input_cache_write_1h) };
  const input = price(pricing.input), write = price(pricing.input_cache_write, pricing.input);
  const fromWrite: DerivedPrice = { from: pricing.input_cache_write !== undefined ? "input_cache_write" : "input", times: 1 };
  if (!write.gt(input)) return { price: write, derived: fromWrite };
  const double = input.times(2);
  return double.gt(write) ? { price: double, derived: { from: "input", times: 2 } } : { price: write, derived: fromWrite };
}

function pricesOf(pricing: Pricing): BigPrices {
  let b = bigPrices.get(pricing);
  if (!b) {
    b = {
      input: price(pricing.input), inputAudio: price(pricing.input_audio, pricing.input), output: price(pricing.output),
      cacheRead: price(cachePrices(pricing).read), cacheReadAudio: price(pricing.input_cache_read_audio, cachePrices(pricing).read),
      cacheWrite: price(cachePrices(pricing).write),
      cacheWrite1h: cacheWrite1hPrice(pricing),
      image: price(pricing.image), video: price(pricing.video_second), search: price(pricing.search_unit), webSearch: price(pricing.web_search),
    };
    bigPrices.set(pricing, b);
  }
  return b;
}

/**
 * The cost of one request's usage at one endpoint's prices. Cache prices default to the input price; a prompt over
 * the endpoint's long-context threshold is billed whole at that tier's prices, judged per model call when the request
 * made several (`calls`: long-context.ts).
 */
export function costOf(usage: Usage, pricing: Pricing, calls?: readonly Usage[]): Big {
  return pricedParts(usage, pricing, calls).reduce((sum, part) => sum.plus(partCost(part.usage, part.pricing)), new Big(0));
}

/** The cost of usage at exactly these prices (no tier chosen here). */
function partCost(usage: Usage, pricing: Pricing): Big {
  const p = pricesOf(pricing);
  const [input, audio, cacheRead, cacheReadAudio] = audioSplit(usage);
  let c = p.input.times(input).plus(p.inputAudio.times(audio));
  c = c.plus(p.output.times(usage.outputTokens || 0));
  if (cacheRead) c = c.plus(p.cacheRead.times(cacheRead));
  if (cacheReadAudio) c = c.plus(p.cacheReadAudio.times(cacheReadAudio));
  const [write5m, write1h] = writeSplit(usage);
  if (write5m) c = c.plus(p.cacheWrite.times(write5m));
  if (write1h) c = c.plus(p.cacheWrite1h.times(write1h));
  if (usage.images) c = c.plus(p.image.times(usage.images));
  if (usage.videoSeconds) c = c.plus(p.video.times(usage.videoSeconds));
  if (usage.searchUnits) c = c.plus(p.search.times(usage.searchUnits));
  if (usage.webSearches) c = c.plus(p.webSearch.times(usage.webSearches));
  return c;
}

/**
 * The same prices as integers at one scale (units of 10^-scale USD), so the per-request cost is exact integer math
 * (BigInt) instead of seven Big multiplications and a decimal formatting per ledger record. Parsed once per pricing.
 */
interface ScaledPrices { scale: number; picoMul: bigint; picoDiv: bigint; input: bigint; inputAudio: bigint; output: bigint; cacheRead: bigint; cacheReadAudio: bigint; cacheWrite: bigint; cacheWrite1h: bigint; image: bigint; video: bigint; search: bigint; webSearch: bigint }
const scaledPrices = new WeakMap<Pricing, ScaledPrices>();

function scaledOf(pricing: Pricing): ScaledPrices {
  let s = scaledPrices.get(pricing);
  if (!s) {
    const b = pricesOf(pricing);
    const all = [b.input, b.inputAudio, b.output, b.cacheRead, b.cacheReadAudio, b.cacheWrite, b.cacheWrite1h, b.image, b.video, b.search, b.webSearch];
    // Enough decimals to hold every price exactly.
    const scale = Math.max(0, ...all.map((v) => v.c.length - 1 - v.e));
    const k = new Big(10).pow(scale);
    const int = (v: Big) => BigInt(v.times(k).toFixed(0));
    s = {
      scale, picoMul: 10n ** BigInt(Math.max(0, 12 - scale)), picoDiv: 10n ** BigInt(Math.max(0, scale - 12)),
      input: int(b.input), inputAudio: int(b.inputAudio), output: int(b.output), cacheRead: int(b.cacheRead), cacheReadAudio: int(b.cacheReadAudio), cacheWrite: int(b.cacheWrite), cacheWrite1h: int(b.cacheWrite1h),
      image: int(b.image), video: int(b.video), search: int(b.search), webSearch: int(b.webSearch),
    };
    scaledPrices.set(pricing, s);
  }
  return s;
}

/** A usage count as a BigInt, or undefined when it is not a non-negative safe integer (then Big does the math). */
const count = (n: number | undefined): bigint | undefined => (!n ? 0n : Number.isSafeInteger(n) && n > 0 ? BigInt(n) : undefined);

/**
 * A request's cost as the ledger stores it: the exact decimal USD string and pico-USD rounded up (its tier's prices;
 * `calls`: the usage of each model call `usage` sums, whose tier is judged on each, as costOf).
 */
export function costParts(usage: Usage, pricing: Pricing, calls?: readonly Usage[]): { usd: string; pico: bigint } {
  const parts = pricedParts(usage, pricing, calls);
  if (parts.length === 1) return partParts(parts[0]!.usage, parts[0]!.pricing);
  // Calls at two tiers (rare): exact decimals, rounded up to pico once for the sum.
  const c = costOf(usage, pricing, calls);
  return { usd: usdString(c), pico: toPico(c) };
}

function partParts(usage: Usage, pricing: Pricing): { usd: string; pico: bigint } {
  const p = scaledOf(pricing);
  const [write5m, write1h] = writeSplit(usage);
  const [input, audio, cacheRead, cacheReadAudio] = audioSplit(usage);
  const i = count(input), ia = count(audio), o = count(usage.outputTokens), cr = count(cacheRead), cra = count(cacheReadAudio), cw = count(write5m), cw1h = count(write1h);
  const im = count(usage.images), v = count(usage.videoSeconds), se = count(usage.searchUnits), ws = count(usage.webSearches);
  if (i === undefined || ia === undefined || o === undefined || cr === undefined || cra === undefined || cw === undefined || cw1h === undefined || im === undefined || v === undefined || se === undefined || ws === undefined) {
    const c = partCost(usage, pricing);
    return { usd: usdString(c), pico: toPico(c) };
  }
  const scaled = i * p.input + ia * p.inputAudio + o * p.output + cr * p.cacheRead + cra * p.cacheReadAudio + cw * p.cacheWrite + cw1h * p.cacheWrite1h + im * p.image + v * p.video + se * p.search + ws * p.webSearch;
  return { usd: scaledToUsd(scaled, p.scale), pico: p.picoDiv === 1n ? scaled * p.picoMul : ceilDiv(scaled, p.picoDiv) };
}

/**
 * Input and cache reads as [text input, audio input, text cache reads, audio cache reads]: the audio counts are parts of
 * inputTokens and cacheReadTokens, each held within its total (usage not from a parser), so no token is billed twice.
 */
function audioSplit(usage: Usage): [number, number, number, number] {
  const input = usage.inputTokens || 0, cached = usage.cacheReadTokens || 0;
  const audio = Math.max(0, Math.min(input, usage.audioInputTokens || 0)), cachedAudio = Math.max(0, Math.min(cached, usage.cacheReadAudioTokens || 0));
  return [input - audio, audio, cached - cachedAudio, cachedAudio];
}

/**
 * Cache writes as [5-minute, 1-hour]: cacheWrite1hTokens is a part of cacheWriteTokens. A 1-hour count above the total
 * (usage not from a parser) is billed whole rather than trusted less.
 */
function writeSplit(usage: Usage): [number, number] {
  const total = usage.cacheWriteTokens || 0, oneHour = usage.cacheWrite1hTokens ?? 0;
  return oneHour > 0 ? [Math.max(0, total - oneHour), oneHour] : [total, 0];
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** A non-negative integer count of 10^-scale USD as a plain decimal string, trailing zeros trimmed (as usdString). */
function scaledToUsd(n: bigint, scale: number): string {
  const digits = n.toString();
  if (scale === 0 || n === 0n) return digits;
  const padded = digits.length <= scale ? "0".repeat(scale - digits.length + 1) + digits : digits;
  const cut = padded.length - scale;
  const frac = padded.slice(cut).replace(/0+$/, "");
  return frac ? `${padded.slice(0, cut)}.${frac}` : padded.slice(0, cut);
}

/** Plain decimal string of a Big, no exponent ("0.00000015"). */
export const usdString = (b: Big): string => {
  const s = b.toFixed(Math.max(0, -b.e + (b.c.length - 1)));
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
};
