// The usage of a response the gateway makes of several model turns (the mcp tool loop): every turn's counts added up,
// each billed unit (web searches, images, ...) included, in the canonical form and in the Responses wire form.
import type { Usage } from "../contracts/provider.ts";

/** a + b, field by field: every count either side has (undefined only where neither has it). */
export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!b) return a;
  if (!a) return { ...b };
  const out: Record<string, number | undefined> = { ...a };
  for (const [k, v] of Object.entries(b)) if (typeof v === "number") out[k] = ((out[k] as number | undefined) ?? 0) + v;
  return out as unknown as Usage;
}

const num = (x: unknown) => (typeof x === "number" ? x : 0);

/** The numbers of two wire objects added, key by key (the rest of `a` kept). */
function addCounts(a: any, b: any): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  if (b && typeof b === "object") for (const [k, v] of Object.entries(b)) if (typeof v === "number") out[k] = num(out[k]) + v;
  return out;
}

/** Two Responses `usage` objects added: the totals and every count in their details. */
export function addWireUsage(a: any, b: any): any {
  if (!b) return a;
  if (!a) return structuredClone(b);
  return {
    ...a,
    input_tokens: num(a.input_tokens) + num(b.input_tokens),
    output_tokens: num(a.output_tokens) + num(b.output_tokens),
    total_tokens: num(a.total_tokens) + num(b.total_tokens),
    input_tokens_details: addCounts(a.input_tokens_details, b.input_tokens_details),
    output_tokens_details: addCounts(a.output_tokens_details, b.output_tokens_details),
  };
}
