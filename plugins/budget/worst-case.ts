// The most a request can cost: the largest input it can carry, the most output it may produce and the web searches
// it may run, at the dearest endpoint of the requested model and of every fallback model: input times the model calls
// it may make, output times its upstream calls (core/metering/usage-ceiling.ts maxModelCalls, the rule the meter's
// ceiling bills by: a Responses request with an mcp tool that can run a call unapproved makes up to
// mcp.max_tool_rounds turns, each an upstream call with its own output limit, and server tools pass over the context
// once more for each call of theirs the request allows, all within one response its output limit bounds), at the
// endpoint's long-prompt tier when the input may be over its threshold (core/money/long-context.ts); images at the
// price of the size and quality each endpoint will be sent (its own model's tier; an endpoint that will be left out
// is not counted); a request carrying audio, or input the gateway cannot see (a URL, a file id, a stored conversation or
// prompt, cached content: any may be audio), with its input at the dearer of `input` and `input_audio`.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { Pricing } from "../../core/generated/types/gateway.ts";
import type { Usage } from "../../core/contracts/provider.ts";
import { cacheWrite1h, toPico, type DerivedPrice } from "../../core/money/money.ts";
import { requestedModels } from "../../core/pipeline/requested-models.ts";
import { bodyChars, outputTokensOn } from "../../core/metering/request-size.ts";
import type { EndpointRuntime, ModelRuntime } from "../../core/config/runtime.ts";
import { clampDuration } from "../../core/endpoints/video-duration.ts";
import { targetTier } from "../../core/endpoints/image-tier.ts";
import { pricingForTier } from "../../core/money/image-price.ts";
import { canThink } from "../../core/metering/thinking.ts";
import { LANGUAGE, unboundedInput, unseenInput } from "./unbounded-input.ts";
import { carriesAudio } from "./audio-parts.ts";
import { embeddingsInputBound, rerankInputBound } from "../../core/metering/batch-bounds.ts";
import { maxModelCalls } from "../../core/metering/usage-ceiling.ts";
import { serverToolRounds } from "../../core/metering/server-tools.ts";
import type { AskingProtocol } from "../../core/metering/output-limit.ts";
import { pricingForPrompt } from "../../core/money/long-context.ts";
import { contextWindowOn } from "../../core/metering/context-window.ts";
import { liveConfiguredEndpoints } from "../../core/config/retirement.ts";

const FALLBACK_CONTEXT = 1_000_000;

/**
 * `unbounded`: the body's size does not bound the input (unbounded-input.ts). A Responses request that continues a
 * stored conversation or names a stored prompt carries only its newest input (the rest is rebuilt from a store after
 * the policies ran), server tools add their results, media by URL or id is fetched, inline media is billed by what it
 * shows (a tiny image, a PDF's pages): any input up to the context window.
 */
function worstUsage(ctx: GatewayContext, model: ModelRuntime, ep: EndpointRuntime, webSearches: number, unbounded: boolean): Usage {
  const body = ctx.body ?? {};
  const { maxTokens } = ep;
  // The window this request has there: the long one only when it asks for it and the upstream receives the ask.
  const contextWindow = contextWindowOn(ctx, ep);
  // A batch is not one context window (core/metering/batch-bounds.ts, the meter's ceiling too); a body of another
  // shape, refused by the endpoint, is bounded by its size alone.
  if (ctx.endpoint === "embeddings") return { inputTokens: embeddingsInputBound(body, contextWindow) ?? bodyChars(ctx), outputTokens: 0 };
  if (ctx.endpoint === "rerank") {
    // One search unit: a request is one billed query whatever its document count (the spec).
    return { inputTokens: rerankInputBound(body) ?? bodyChars(ctx), outputTokens: 0, searchUnits: 1 };
  }
  const input = unbounded ? contextWindow ?? FALLBACK_CONTEXT : Math.min(bodyChars(ctx), contextWindow ?? FALLBACK_CONTEXT);
  switch (ctx.endpoint) {
    case "images":
      return { inputTokens: input, outputTokens: 0, images: typeof body.n === "number" ? body.n : 1 };
    case "videos":
      // The seconds the model will generate: the request's duration clamped to what it supports (possibly up).
      return { inputTokens: input, outputTokens: 0, videoSeconds: Math.ceil(clampDuration(model, typeof body.duration === "number" ? body.duration : undefined)) };
    default:
      // Exactly what this endpoint's upstream will be asked for (every alias, thinking budgets, choices), else the
      // model's maximum per choice.
      return { inputTokens: input, outputTokens: outputTokensOn(ctx, ep, maxTokens ?? contextWindow ?? FALLBACK_CONTEXT, canThink(model))!, webSearches };
  }
}

/** The pricing key an input price was taken from (said in a refusal: a user computing with `input` gets another sum). */
export type InputPriceKey = "input" | "input_cache_write" | "input_cache_write_1h" | "input_audio";

/**
 * Prices in integer pico-USD per unit (rounded up: a reservation may only err high), computed once per pricing; the
 * two input prices with the key each was taken from.
 */
interface PicoPrices {
  input: bigint; inputKey: InputPriceKey; inputAudio: bigint; inputAudioKey: InputPriceKey;
  /** Set when the input price is a 1-hour write price the pricing does not state (core/money/money.ts derives it). */
  inputDerived?: DerivedPrice;
  output: bigint; image: bigint; video: bigint; search: bigint; webSearch: bigint;
}
const picoCache = new WeakMap<Pricing, PicoPrices>();

function picoPrices(p: Pricing): PicoPrices {
  let c = picoCache.get(p);
  if (!c) {
    const pico = (v: string | undefined) => (v ? toPico(v) : 0n);
    // Input at the dearest of the input and cache-write prices (5-minute and 1-hour): the split is unknown beforehand.
    const write1h = cacheWrite1h(p);
    const candidates: [InputPriceKey, bigint][] = [["input", pico(p.input)], ["input_cache_write", pico(p.input_cache_write)], ["input_cache_write_1h", toPico(write1h.price)]];
    const [inputKey, input] = candidates.reduce((a, b) => (b[1] > a[1] ? b : a));
    const inputDerived = inputKey === "input_cache_write_1h" ? write1h.derived : undefined;
    // A request carrying audio or input out of sight: at input_audio where it is dearer still (Gemini 2.5 Flash bills
    // audio at $1.00 per million against $0.30), as how much of its input is audio is unknown too.
    const audio = pico(p.input_audio);
    const dearerAudio = audio > input;
    picoCache.set(p, (c = {
      input, inputKey, inputAudio: dearerAudio ? audio : input, inputAudioKey: dearerAudio ? "input_audio" : inputKey,
      ...(inputDerived ? { inputDerived } : {}),
      output: pico(p.output), image: pico(p.image), video: pico(p.video_second), search: pico(p.search_unit), webSearch: pico(p.web_search),
    }));
  }
  return c;
}

/**
 * An endpoint's prices with `image` at the tier an image request is sent there (its model's, core/endpoints/image-tier.ts),
 * or undefined when that endpoint will be left out of the chain. When no endpoint of any model the request names can
 * serve it (`anyServes` false), nothing is held: the images endpoint refuses it with the 400 naming `size` or
 * `quality` before any upstream call (the router's chain is only those models), and holding every endpoint's dearest
 * tier turned that 400 into a 402 on a nearly spent budget, whose advice (fewer images) could not help.
 */
function imagePricing(ctx: GatewayContext, model: ModelRuntime, p: Pricing, anyServes: boolean): Pricing | undefined {
  if (!anyServes) return undefined;
  const { tier } = targetTier(model, p, ctx.body ?? {});
  return tier && pricingForTier(p, tier);
}

/** Whether any endpoint of the models an image request names can be sent its tier. */
function anyImageServes(ctx: GatewayContext, now: number): boolean {
  return requestedModels(ctx.body).some(({ id }) => {
    const m = ctx.config.models.get(id);
    return !!m && liveConfiguredEndpoints(m, now).some((ep) => targetTier(m, ep.pricing, ctx.body ?? {}).tier);
  });
}

const big = (n: number | undefined) => BigInt(Math.ceil(n ?? 0));

/** A request's worst case, in pico-USD. */
export interface WorstCase {
  pico: bigint;
  /**
   * A generation's worst case with no output at all (its input and web searches, at the endpoint where that is
   * dearest): what no output limit can lower. Absent for media operations.
   */
  withoutOutputPico?: bigint;
  /**
   * The price per input token withoutOutputPico holds its input at (pico-USD, at the endpoint where that is dearest)
   * and the pricing key it is (input_audio for input that may be audio): a refusal says it.
   */
  inputPrice?: { pico: bigint; key: InputPriceKey; derived?: DerivedPrice };
  /** The web searches reserved (counted in withoutOutputPico at the endpoint's web_search price). */
  webSearches?: number;
  /** The model turns reserved when more than one (the mcp loop): every figure here is for all of them. */
  modelTurns?: number;
  /** The model calls reserved when more than the turns (server tools loop within a call): every figure is for all. */
  modelCalls?: number;
  /** The field that states a smaller server-tool limit, lowering modelCalls (core/metering/server-tools.ts). */
  limitField?: string;
}

/**
 * The worst-case cost in pico-USD (integer arithmetic: this runs on every budgeted request); `webSearches` is the
 * most the request can run (core/metering/server-tools.ts) in one upstream call. Each model call re-reads its input
 * (up to the context window); the output limit (max_tokens, max_output_tokens) bounds a whole upstream call, its
 * server-tool passes together, so output is once per turn, as are the searches.
 */
export function worstCase(ctx: GatewayContext, webSearches = 0): WorstCase {
  const { calls, turns, perUpstreamCall } = maxModelCalls(ctx);
  const one = worstCase1(ctx, webSearches * turns, calls, turns, perUpstreamCall);
  if (calls === 1) return one;
  const limitField = LANGUAGE.has(ctx.endpoint) ? serverToolRounds(ctx.body, ctx.endpoint as AskingProtocol, ctx.config).limitField : undefined;
  return {
    ...one, webSearches: webSearches * turns, ...(turns > 1 ? { modelTurns: turns } : {}),
    ...(calls > turns ? { modelCalls: calls, ...(limitField ? { limitField } : {}) } : {}),
  };
}

/**
 * `calls` model calls' worst case (each its input) over `turns` upstream calls (each its output), with `webSearches`
 * searches among them; `perUpstreamCall` of them may be billed as one usage, its long-prompt tier judged on their
 * input together.
 */
function worstCase1(ctx: GatewayContext, webSearches: number, calls: number, turns: number, perUpstreamCall: number): WorstCase {
  const n = BigInt(calls);
  let worst = 0n;
  let withoutOutput = 0n;
  let inputPrice: WorstCase["inputPrice"];
  const images = ctx.endpoint === "images";
  // A retired endpoint is sent nothing (core/config/retirement.ts): its prices are no part of the worst case.
  const now = Date.now();
  const anyServes = images && anyImageServes(ctx, now);
  const unbounded = unboundedInput(ctx);
  // Audio is inline media or media by reference, so only an unbounded input can carry it (text-only requests skip the
  // walks). Input out of sight may be audio whatever its URL says (an image by URL is over-held on a model with an
  // audio price: holds only, billing is by the reported usage); inline media is checked for audio.
  const audio = unbounded && LANGUAGE.has(ctx.endpoint) && (unseenInput(ctx) || carriesAudio(ctx.body));
  for (const { id } of requestedModels(ctx.body)) {
    const model = ctx.config.models.get(id);
    if (!model) continue;
    for (const ep of liveConfiguredEndpoints(model, now)) {
      const pricing = images ? imagePricing(ctx, model, ep.pricing, anyServes) : ep.pricing;
      if (!pricing) continue;
      const u = worstUsage(ctx, model, ep, webSearches, unbounded);
      // An input that may be over a long-prompt threshold is held at that tier's prices: it would be billed at them.
      const p = picoPrices(pricingForPrompt(pricing, u.inputTokens * perUpstreamCall));
      const perToken = audio ? p.inputAudio : p.input;
      const rest = (big(u.inputTokens) * perToken + big(u.images) * p.image + big(u.videoSeconds) * p.video + big(u.searchUnits) * p.search) * n
        + big(u.webSearches) * p.webSearch;
      const c = rest + big(u.outputTokens) * p.output * BigInt(turns);
      if (c > worst) worst = c;
      if (rest > withoutOutput || !inputPrice) {
        if (rest > withoutOutput) withoutOutput = rest;
        const key = audio ? p.inputAudioKey : p.inputKey;
        inputPrice = { pico: perToken, key, ...(key === "input_cache_write_1h" && p.inputDerived ? { derived: p.inputDerived } : {}) };
      }
    }
  }
  return LANGUAGE.has(ctx.endpoint) ? { pico: worst, withoutOutputPico: withoutOutput, webSearches, ...(inputPrice ? { inputPrice } : {}) } : { pico: worst };
}

/** worstCase()'s total alone. */
export function worstCasePico(ctx: GatewayContext, webSearches = 0): bigint {
  return worstCase(ctx, webSearches).pico;
}
