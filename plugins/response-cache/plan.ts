// Whether and how one request uses the response cache. Opt-in twice: the project (projects.<id>.cache) and the
// request (providerOptions.gateway.cache: true, or {ttl, refresh}), unless the project caches every request
// (mode: always), which a request can still decline (cache: false). The operator's limits come from `cache:`. A
// request on state the provider changes under the same body is never cached (provider-state.ts).
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { CacheConfig, ProjectCacheConfig } from "../../core/generated/types/gateway.ts";
import { toPico } from "../../core/money/money.ts";
import { onProviderState } from "./provider-state.ts";
import { routable } from "./in-service.ts";

/** Endpoints whose answers are cached: generated text and vectors, not images, videos, counts or the catalog. */
export const CACHEABLE = new Set(["chat", "messages", "responses", "gemini", "embeddings", "rerank"]);

const DEFAULT_TTL_S = 3600;

export interface CacheSettings {
  maxEntryBytes: number;
  maxBytes: number;
  memoryBytes: number;
  maxTtlMs: number;
  hitPriceUsd: string;
}

export function settingsOf(c: CacheConfig | undefined): CacheSettings {
  return {
    maxEntryBytes: c?.max_entry_bytes ?? 1024 * 1024,
    maxBytes: c?.max_bytes ?? 256 * 1024 * 1024,
    memoryBytes: c?.memory_bytes ?? 16 * 1024 * 1024,
    maxTtlMs: (c?.max_ttl_seconds ?? 7 * 86_400) * 1000,
    hitPriceUsd: c?.hit_price_usd ?? "0",
  };
}

export interface CachePlan {
  ttlMs: number;
  /** Ask the provider even when an answer is kept, and keep the new one. */
  refresh: boolean;
  /** What a hit costs (sandbox: nothing). */
  price: { usd: string; pico: bigint };
}

type RequestOption = boolean | { ttl?: number; refresh?: boolean } | undefined;

const ZERO = { usd: "0", pico: 0n };
const prices = new Map<string, { usd: string; pico: bigint }>();
function priceOf(usd: string): { usd: string; pico: bigint } {
  let p = prices.get(usd);
  if (!p) {
    if (prices.size > 1000) prices.clear(); // prices come from the config: a handful
    prices.set(usd, (p = { usd, pico: toPico(usd) }));
  }
  return p;
}

/** The plan for this request, or undefined when the cache has nothing to do with it. */
export function planOf(ctx: GatewayContext, settings: CacheSettings): CachePlan | undefined {
  const auth = ctx.auth;
  if (!auth || ctx.method !== "POST" || ctx.body === undefined || !CACHEABLE.has(ctx.endpoint)) return undefined;
  // A conversation, a stored prompt's latest version, a named container: the provider's state, not the body, decides.
  if (onProviderState(ctx.endpoint, ctx.body)) return undefined;
  const project: ProjectCacheConfig | undefined = auth.project.config.cache;
  if (!project) return undefined;
  const asked = ctx.body.providerOptions?.gateway?.cache as RequestOption;
  if (asked === false || (asked === undefined && project.mode !== "always")) return undefined;
  // Only a request the router would route: one naming a model removed by a reload or retired on its day is its 404,
  // not answered from the cache (after the opt-in: most projects never cache, and pay nothing for this).
  if (!routable(ctx, Date.now())) return undefined;
  const option = typeof asked === "object" ? asked : {};
  const ttlMs = Math.min((option.ttl ?? project.ttl_seconds ?? DEFAULT_TTL_S) * 1000, settings.maxTtlMs);
  const price = auth.sandbox ? ZERO : priceOf(project.hit_price_usd ?? settings.hitPriceUsd);
  return { ttlMs, refresh: option.refresh === true, price };
}
