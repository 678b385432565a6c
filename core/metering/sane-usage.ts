// Usage as an upstream reports it is untrusted input (docs/security.md): a provider's bug or a tenant's own BYOK
// base_url may answer 1e20 tokens, a negative count, or NaN. Billing multiplies these by prices into a 64-bit pico-USD
// column and Prometheus counters, so they are made sane here, once, before the meter bills them: counts are
// non-negative, whole (rounded up, as the gateway's estimates err high) and capped; a negative or non-finite count is
// treated as missing, so the meter's estimate applies as for an upstream that reported none. For a request, counts are
// also capped at what it could have used (usage-ceiling.ts): MAX_USAGE_TOKENS alone still billed $750 for one answer.
import type { Usage } from "../contracts/provider.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { usageCeiling, type UsageCeiling } from "./usage-ceiling.ts";

/**
 * Most tokens of one kind billed for one request: 100x the largest context window offered today, and low enough
 * that no realistic price (up to $2 000 per million tokens) can take a record's cost past a 64-bit pico-USD integer.
 */
export const MAX_USAGE_TOKENS = 1_000_000_000;
/** Most images, video seconds, search units or web searches billed for one request. */
export const MAX_USAGE_UNITS = 1_000_000;

const UNIT_FIELDS = ["images", "searchUnits", "webSearches"] as const;

/** A count the upstream reported that was not billed as reported: dropped (negative, non-finite) or capped. */
export interface UsageFix {
  field: keyof Usage;
  reported: unknown;
  billed: number | undefined;
}

export interface SaneUsage {
  usage: Usage;
  fixes: UsageFix[];
}

const memo = new WeakMap<Usage, SaneUsage>();
const NO_FIXES: UsageFix[] = [];

/** A count that needs no fix below `max`: absent, or a whole non-negative number up to it. */
const fine = (v: unknown, max: number) => v === undefined || (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= max);

/** Whether saneUsage would leave `u` as it is (the same rules, in one pass over its counts). */
function alreadySane(u: Usage, ceiling: UsageCeiling | undefined): boolean {
  const inMax = Math.min(MAX_USAGE_TOKENS, ceiling?.input ?? Infinity);
  const outMax = Math.min(MAX_USAGE_TOKENS, ceiling?.output ?? Infinity);
  const { inputTokens: i, outputTokens: o, cacheReadTokens: r, cacheWriteTokens: w } = u;
  return fine(i, inMax) && fine(o, outMax) && fine(r, inMax) && fine(w, inMax) && (i ?? 0) + (r ?? 0) + (w ?? 0) <= inMax
    && fine(u.cacheWrite1hTokens, Math.min(inMax, w ?? Infinity)) && fine(u.reasoningTokens, outMax)
    && fine(u.images, MAX_USAGE_UNITS) && fine(u.searchUnits, MAX_USAGE_UNITS) && fine(u.webSearches, MAX_USAGE_UNITS)
    && (u.videoSeconds === undefined || (typeof u.videoSeconds === "number" && u.videoSeconds >= 0 && u.videoSeconds <= MAX_USAGE_UNITS))
    && i !== undefined && o !== undefined;
}

/**
 * `u` made sane (the same object when nothing needed fixing); what was changed, for the log and the record. With a
 * ceiling, input and cache tokens together stay within `ceiling.input`, output and reasoning within `ceiling.output`.
 */
export function saneUsage(u: Usage, ceiling?: UsageCeiling): SaneUsage {
  // Nearly every answer's figures are sane already: checked without a closure, an array or a copy.
  if (alreadySane(u, ceiling)) return { usage: u, fixes: NO_FIXES };
  const memoed = !ceiling || (ceiling.input === undefined && ceiling.output === undefined);
  let s = memoed ? memo.get(u) : undefined;
  if (s) return s;
  let usage = u;
  const fixes: UsageFix[] = [];
  const fix = (field: keyof Usage, max: number, whole: boolean) => {
    const v: unknown = u[field];
    if (v === undefined || v === null) return;
    let billed: number | undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) billed = undefined;
    else billed = Math.min(max, whole ? Math.ceil(v) : v);
    if (billed === v) return;
    if (usage === u) usage = { ...u };
    if (billed === undefined) delete usage[field];
    else usage[field] = billed;
    fixes.push({ field, reported: v, billed });
  };
  const cap = (n: number | undefined) => Math.min(MAX_USAGE_TOKENS, n ?? Infinity);
  // One call's input, cache reads and writes share its context window: each gets what the ones before left.
  let room = cap(ceiling?.input);
  const input = (f: "inputTokens" | "cacheReadTokens" | "cacheWriteTokens") => {
    fix(f, room, true);
    room -= usage[f] ?? 0;
  };
  input("inputTokens");
  fix("outputTokens", cap(ceiling?.output), true);
  input("cacheReadTokens");
  input("cacheWriteTokens");
  fix("cacheWrite1hTokens", Math.min(cap(ceiling?.input), usage.cacheWriteTokens ?? Infinity), true); // of cacheWriteTokens
  fix("audioInputTokens", usage.inputTokens ?? 0, true); // of inputTokens
  fix("cacheReadAudioTokens", usage.cacheReadTokens ?? 0, true); // of cacheReadTokens
  fix("reasoningTokens", cap(ceiling?.output), true);
  for (const f of UNIT_FIELDS) fix(f, MAX_USAGE_UNITS, true);
  fix("videoSeconds", MAX_USAGE_UNITS, false); // billed per second, fractions included
  // Usage's two required counts stay numbers: 0 reads as "not reported" to the meter, which then estimates.
  if (usage.inputTokens === undefined) usage.inputTokens = 0;
  if (usage.outputTokens === undefined) usage.outputTokens = 0;
  s = { usage, fixes };
  if (memoed) memo.set(u, s);
  return s;
}

/** The request's last answer: its usage object and that made sane (a property of ctx: no WeakMap entry per request). */
const SANE = Symbol("sane usage");
type WithSane = GatewayContext & { [SANE]?: { from: Usage; sane: SaneUsage } };

/** ctx.usage made sane within what this request could have used (computed once per usage object). */
function saneFor(ctx: GatewayContext, u: Usage): SaneUsage {
  const m = (ctx as WithSane)[SANE];
  if (m?.from === u) return m.sane;
  const sane = saneUsage(u, usageCeiling(ctx));
  (ctx as WithSane)[SANE] = { from: u, sane };
  return sane;
}

const logged = new WeakSet<GatewayContext>();

/**
 * The usage the upstream reported for this request (ctx.usage, whichever protocol it came through), made sane for
 * billing; a fix is logged once per request (with the figures as reported), and usageFixed marks the record.
 */
export function billableUsage(ctx: GatewayContext): Usage | undefined {
  if (!ctx.usage) return undefined;
  const { usage, fixes } = saneFor(ctx, ctx.usage);
  if (fixes.length && !logged.has(ctx)) {
    logged.add(ctx);
    const last = ctx.attempts[ctx.attempts.length - 1];
    ctx.gateway.log.warn("upstream usage not billed as reported: capped, or read as missing and estimated", {
      requestId: ctx.requestId, generationId: ctx.generationId, provider: last?.provider, model: last?.model,
      fixes: fixes.map((f) => `${f.field}: ${String(f.reported)} -> ${f.billed ?? "missing"}`),
    });
  }
  return usage;
}

/** Whether the upstream's figures for this request were not billed as reported (its ledger record says `estimated`). */
export function usageFixed(ctx: GatewayContext): boolean {
  return ctx.usage !== undefined && saneFor(ctx, ctx.usage).fixes.length > 0;
}
