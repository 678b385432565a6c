// Routing decisions as pure functions: (model chain, providerOptions.gateway, project credentials, live stats)
// -> the ordered list of targets dispatch walks. Exact semantics: docs/routing.md.
import type { ModelRuntime } from "../../core/config/runtime.ts";
import type { ModelEndpointConfig, ProjectConfig, ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { EndpointStats } from "../../core/stats/index.ts";
import type { Target } from "../../core/contracts/provider.ts";
import { requestedChoices, statedOutputLimit } from "../../core/metering/output-limit.ts";
import { pricingForPrompt } from "../../core/money/long-context.ts";
import { liveEndpoints } from "../../core/config/retirement.ts";
import { thinksByTags } from "../../core/metering/thinking.ts";

export type SortKey = "cost" | "ttft" | "tps";

export interface RoutingOptions {
  order?: string[];
  only?: string[];
  sort?: SortKey;
  models?: string[];
  providerTimeouts?: { byok?: Record<string, number> };
}

/** What a request will consume, for `sort: cost`. */
export interface RequestShape {
  inputTokens: number;
  outputTokens: number;
  images?: number;
  videoSeconds?: number;
  searchUnits?: number;
}

export interface RouteInput {
  /** The request's model first, then each fallback model (already resolved, duplicates removed). */
  chain: ModelRuntime[];
  /** The request's instant: an endpoint retired by then (`retires:`) is no target. */
  now: number;
  options: RoutingOptions;
  /** Providers enabled in the gateway (their own credentials are set). */
  enabled: ReadonlySet<string>;
  /** Every declared provider, enabled or not (a project's own key can use a provider the gateway has no key for). */
  declared: Readonly<Record<string, ProviderConfig>>;
  /** The project's bring-your-own-key credentials, provider name -> credentials. */
  byok?: ProjectConfig["providers"];
  shape: RequestShape;
  stats: (model: string, provider: string) => EndpointStats;
}

function byokFor(input: RouteInput, provider: string) {
  const c = input.byok?.[provider];
  // An unset ${ENV} leaves an empty key: the project simply has no key of its own for this provider.
  return c && typeof c.api_key === "string" && c.api_key !== "" ? c : undefined;
}

function toTarget(model: ModelRuntime, ep: ModelEndpointConfig, input: RouteInput): Target | undefined {
  const own = byokFor(input, ep.provider);
  if (!own && !input.enabled.has(ep.provider)) return undefined;
  if (own && !(ep.provider in input.declared)) return undefined;
  const t: Target = {
    modelId: model.id,
    provider: ep.provider,
    upstreamModel: ep.model,
    pricing: ep.pricing ?? {},
    contextWindow: ep.context_window ?? model.config.context_window,
    maxTokens: ep.max_tokens ?? model.config.max_tokens,
  };
  if (ep.reasoning_model !== undefined) t.reasoningModel = ep.reasoning_model;
  if (ep.native_responses) t.nativeResponses = true;
  if (ep.reasoning_effort === false) t.acceptsReasoningEffort = false;
  const thinks = thinksByTags(model);
  if (thinks !== undefined) t.reasoning = thinks;
  if (own) {
    t.credentials = { apiKey: own.api_key, ...(own.base_url ? { baseUrl: own.base_url } : {}) };
    const timeout = input.options.providerTimeouts?.byok?.[ep.provider] ?? own.timeout_ms;
    if (timeout !== undefined) t.timeoutMs = Math.max(1, Math.round(timeout));
  }
  return t;
}

const price = (s: string | undefined) => (s === undefined ? undefined : Number(s));

/**
 * Estimated USD of this request on this target (at its long-prompt tier when the prompt is over the threshold);
 * undefined when the target publishes no price for it.
 */
export function estimateCost(t: Target, shape: RequestShape): number | undefined {
  const p = pricingForPrompt(t.pricing, shape.inputTokens);
  const parts: Array<[number, string | undefined]> = [
    [shape.inputTokens, p.input],
    [shape.outputTokens, p.output],
    [shape.images ?? 0, p.image],
    [shape.videoSeconds ?? 0, p.video_second],
    [shape.searchUnits ?? 0, p.search_unit],
  ];
  let total = 0;
  let priced = false;
  for (const [n, s] of parts) {
    if (!n) continue;
    const v = price(s);
    if (v === undefined) return undefined;
    total += n * v;
    priced = true;
  }
  return priced ? total : price(p.input) !== undefined || price(p.output) !== undefined ? 0 : undefined;
}

/** Sort key of a target: lower is better; undefined (no price / no data) sorts after every known value. */
function sortValue(t: Target, input: RouteInput, key: SortKey): number | undefined {
  if (key === "cost") return estimateCost(t, input.shape);
  const s = input.stats(t.modelId, t.provider);
  if (key === "ttft") return s.latency_last_1h?.p50;
  const tps = s.throughput_last_1h?.p50;
  return tps === undefined ? undefined : -tps;
}

/** Stable sort: ties and unknowns keep catalog order. */
export function sortTargets(targets: Target[], input: RouteInput, key: SortKey): Target[] {
  const keyed = targets.map((t, i) => ({ t, i, v: sortValue(t, input, key) }));
  keyed.sort((a, b) => {
    if (a.v === undefined && b.v === undefined) return a.i - b.i;
    if (a.v === undefined) return 1;
    if (b.v === undefined) return -1;
    return a.v - b.v || a.i - b.i;
  });
  return keyed.map((k) => k.t);
}

/** Providers named in `order` first, in that order; the rest keep their relative order. */
export function applyOrder(targets: Target[], order: string[] | undefined): Target[] {
  if (!order?.length) return targets;
  const rank = new Map<string, number>();
  order.forEach((p, i) => { if (!rank.has(p)) rank.set(p, i); });
  const first = targets.filter((t) => rank.has(t.provider)).sort((a, b) => rank.get(a.provider)! - rank.get(b.provider)!);
  return [...first, ...targets.filter((t) => !rank.has(t.provider))];
}

/** The targets of one model: its endpoints (catalog order), filtered by `only`, sorted, then `order` first. */
export function modelTargets(model: ModelRuntime, input: RouteInput): Target[] {
  const only = input.options.only ? new Set(input.options.only) : undefined;
  let targets = liveEndpoints(model, input.now)
    .filter((ep) => !only || only.has(ep.provider))
    .map((ep) => toTarget(model, ep, input))
    .filter((t): t is Target => t !== undefined);
  if (input.options.sort) targets = sortTargets(targets, input, input.options.sort);
  return applyOrder(targets, input.options.order);
}

/** Every target of the chain: the request's model first, then each fallback model in order. */
export function planRoute(input: RouteInput): Target[] {
  return input.chain.flatMap((m) => modelTargets(m, input));
}

const chars = (v: unknown) => (v === undefined ? 0 : typeof v === "string" ? v.length : JSON.stringify(v).length);
/** The usual ~4 characters per token; only used to compare prices, never to bill. */
const tokens = (n: number) => Math.ceil(n / 4);
const DEFAULT_OUTPUT_TOKENS = 500;

/** A request's shape from its body, per endpoint kind. */
export function requestShape(endpoint: string, body: any): RequestShape {
  switch (endpoint) {
    case "embeddings":
      return { inputTokens: tokens(chars(body.input)), outputTokens: 0 };
    case "rerank":
      return { inputTokens: tokens(chars(body.query) + chars(body.documents)), outputTokens: 0, searchUnits: 1 };
    case "images":
      return { inputTokens: tokens(chars(body.prompt)), outputTokens: 0, images: typeof body.n === "number" ? body.n : 1 };
    case "videos":
      return { inputTokens: tokens(chars(body.prompt)), outputTokens: 0, videoSeconds: typeof body.duration === "number" ? body.duration : 5 };
    default: {
      return {
        inputTokens: tokens(chars(body.messages) + chars(body.system) + chars(body.input) + chars(body.instructions) + chars(body.tools)),
        outputTokens: (statedOutputLimit(body) ?? DEFAULT_OUTPUT_TOKENS) * requestedChoices(body),
      };
    }
  }
}
