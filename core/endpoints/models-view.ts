// Catalog entries in the spec's shapes, as pure functions of the config (and, for endpoints, live stats).
import type { ModelRuntime } from "../config/runtime.ts";
import type { ModelEndpointConfig, Pricing, ProviderConfig } from "../generated/types/gateway.ts";
import type { EndpointStats } from "../stats/index.ts";
import type { CircuitState } from "../health/index.ts";
import { cachePrices } from "../money/money.ts";
import { pricingForPrompt } from "../money/long-context.ts";
import { endpointRetired, liveEndpoints } from "../config/retirement.ts";

const ZERO = "0";

function prices(p: Pricing | undefined) {
  const extra: Record<string, string | NonNullable<Pricing["image_tiers"]>> = {};
  if (p?.image) extra.image = p.image;
  if (p?.image_tiers) extra.image_tiers = p.image_tiers;
  if (p?.video_second) extra.video_second = p.video_second;
  if (p?.search_unit) extra.search_unit = p.search_unit;
  if (p?.web_search) extra.web_search = p.web_search;
  return { base: tokenPrices(p), long: longContext(p), extra };
}

/** The token prices billing charges (money.ts): an unset cache price costs the input price, not nothing. */
function tokenPrices(p: Pricing | undefined) {
  const cache = p ? cachePrices(p) : { read: ZERO, write: ZERO };
  return { input: p?.input ?? ZERO, output: p?.output ?? ZERO, cacheRead: cache.read, cacheWrite: cache.write };
}

/**
 * A long-prompt tier's threshold and the prices a request over it pays (long-context.ts), and the window of a request
 * that asks for the long context where the tier has one (core/metering/context-window.ts); or undefined.
 */
function longContext(p: Pricing | undefined) {
  const above = p?.long_context?.above_input_tokens;
  if (above === undefined) return undefined;
  const window = p!.long_context!.context_window;
  return { above, ...tokenPrices(pricingForPrompt(p!, above + 1)), ...(window !== undefined ? { window: { context_window: window } } : {}) };
}

export function architecture(m: ModelRuntime) {
  const tags = new Set(m.config.tags ?? []);
  const input = ["text"];
  if (tags.has("vision") || m.type === "video") input.push("image");
  if (tags.has("file-input")) input.push("file");
  if (tags.has("audio")) input.push("audio");
  const output = m.type === "embedding" ? ["embeddings"] : m.type === "image" ? ["image"] : m.type === "video" ? ["video"] : ["text"];
  return { modality: `${input.join("+")}->${output.join("+")}`, input_modalities: input, output_modalities: output };
}

/** The endpoint whose price the list shows: the first one the gateway can use, else the first declared. */
function headline(m: ModelRuntime): ModelEndpointConfig | undefined {
  const now = Date.now();
  const usable = m.retiresAt ? m.endpoints.find((e) => !endpointRetired(m, e.provider, e.upstreamModel, now)) : m.endpoints[0];
  return (usable && m.config.endpoints.find((e) => e.provider === usable.provider && e.model === usable.upstreamModel)) ?? liveEndpoints(m, now)[0] ?? m.config.endpoints[0];
}

/** A GET /v1/models list element. */
export function modelEntry(m: ModelRuntime) {
  const c = m.config;
  const ep = headline(m);
  const { base, long, extra } = prices(ep?.pricing);
  return {
    id: m.id,
    object: "model" as const,
    created: c.created ?? c.released ?? 0,
    released: c.released ?? c.created ?? 0,
    owned_by: c.owned_by ?? m.id.split("/")[0]!,
    name: c.name ?? m.id,
    description: c.description ?? "",
    context_window: c.context_window ?? ep?.context_window ?? 0,
    max_tokens: c.max_tokens ?? ep?.max_tokens ?? 0,
    type: m.type,
    tags: c.tags ?? [],
    pricing: {
      input: base.input, output: base.output, input_cache_read: base.cacheRead, input_cache_write: base.cacheWrite, ...extra,
      ...(long ? { long_context: { above_input_tokens: long.above, input: long.input, output: long.output, input_cache_read: long.cacheRead, input_cache_write: long.cacheWrite, ...long.window } } : {}),
    },
  };
}

/** GET /v1/models/{creator}/{model}: the list shape plus further metadata. */
export function modelDetail(m: ModelRuntime) {
  const c = m.config;
  return {
    ...modelEntry(m),
    architecture: architecture(m),
    providers: m.endpoints.filter((e) => !endpointRetired(m, e.provider, e.upstreamModel, Date.now())).map((e) => e.provider),
    ...(c.dimensions ? { dimensions: c.dimensions } : {}),
    ...(c.limits ? { limits: c.limits } : {}),
    ...(c.price_source ? { price_source: c.price_source } : {}),
  };
}

const CHAT_COMMON = ["max_tokens", "temperature", "top_p", "stop", "stream"];
const BY_PROTOCOL: Record<string, string[]> = {
  openai: [...CHAT_COMMON, "seed", "presence_penalty", "frequency_penalty", "logit_bias", "n", "response_format", "user"],
  anthropic: [...CHAT_COMMON, "top_k", "metadata"],
  gemini: [...CHAT_COMMON, "top_k", "seed", "presence_penalty", "frequency_penalty", "response_format"],
  sim: [...CHAT_COMMON, "seed", "n", "response_format"],
};

/** Parameters an endpoint honours: the catalog's list, or a default by model type, protocol and tags. */
export function supportedParameters(m: ModelRuntime, ep: ModelEndpointConfig, protocol: string | undefined): string[] {
  if (ep.supported_parameters) return ep.supported_parameters;
  const tags = new Set(m.config.tags ?? []);
  switch (m.type) {
    case "embedding":
      return ["input", "encoding_format", "user", ...(m.config.limits?.dimensions_supported !== false ? ["dimensions"] : [])];
    case "reranking":
      return ["query", "documents", "top_n", "return_documents"];
    case "image":
      return ["prompt", "n", "size", "quality", "response_format", "user", ...(m.config.limits?.reference_image === true ? ["reference_image"] : [])];
    case "video":
      return ["prompt", "duration", "aspect_ratio", ...(m.config.limits?.image_input === false ? [] : ["image_url"]), ...(m.config.limits?.last_frame === true ? ["last_frame_url"] : []), "user"];
    default: {
      const out = [...(BY_PROTOCOL[protocol ?? "openai"] ?? BY_PROTOCOL.openai!)];
      if (tags.has("tool-use")) out.push("tools", "tool_choice", ...(protocol === "anthropic" ? [] : ["parallel_tool_calls"]));
      if (tags.has("reasoning") && ep.reasoning_effort !== false) out.push(protocol === "anthropic" ? "thinking" : "reasoning_effort");
      if (protocol !== "anthropic") out.push("response_format");
      return [...new Set(out)];
    }
  }
}

export interface EndpointView {
  ep: ModelEndpointConfig;
  provider: ProviderConfig | undefined;
  stats: EndpointStats;
  status: CircuitState;
}

/** One element of endpoints[] in GET /v1/models/{creator}/{model}/endpoints. */
export function endpointEntry(m: ModelRuntime, v: EndpointView) {
  const { base, long, extra } = prices(v.ep.pricing);
  return {
    provider_name: v.ep.provider,
    context_length: v.ep.context_window ?? m.config.context_window ?? 0,
    max_completion_tokens: v.ep.max_tokens ?? m.config.max_tokens ?? 0,
    pricing: {
      prompt: base.input, completion: base.output, input_cache_read: base.cacheRead, input_cache_write: base.cacheWrite, ...extra,
      ...(long ? { long_context: { above_input_tokens: long.above, prompt: long.input, completion: long.output, input_cache_read: long.cacheRead, input_cache_write: long.cacheWrite, ...long.window } } : {}),
    },
    supported_parameters: supportedParameters(m, v.ep, v.provider?.protocol),
    throughput_last_1h: v.stats.throughput_last_1h,
    latency_last_1h: v.stats.latency_last_1h,
    uptime_last_1d: v.stats.uptime_last_1d,
    status: v.status,
  };
}
