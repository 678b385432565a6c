// USD amounts as messages write them: "$1.00", "$0.50", "$100.02", "$0.0004", "$0.0049865". Whole cents at least, so
// a round amount does not read "$1" (a figure with a missing part), and every digit beyond them the amount has: a
// budget's sums are exact, and rounding would hide the fraction of a cent that tipped a request over.
import Big from "big.js";
import { picoToUsd } from "./money.ts";

/** "12" → "12.00", "0.5" → "0.50", "0.0004" unchanged. */
function withCents(decimal: string): string {
  const dot = decimal.indexOf(".");
  if (dot < 0) return `${decimal}.00`;
  return decimal.length - dot - 1 < 2 ? decimal.padEnd(dot + 3, "0") : decimal;
}

/** An integer pico-USD amount, with its dollar sign. */
export function usdText(pico: bigint): string {
  return `$${withCents(picoToUsd(pico))}`;
}

/** A decimal USD string as configured ("100", "0.005", "1e-3"), with its dollar sign. */
export function usdTextOf(decimal: string): string {
  return `$${withCents(new Big(decimal).toFixed())}`;
}
