// The cache's series: lookups by result (hit, miss), and answers offered for keeping by what became of them.
import type { Registry } from "prom-client";
import { CellCounter } from "../../core/metrics-cells.ts";
import { CACHEABLE } from "./plan.ts";

export interface CacheMetrics {
  requests: CellCounter<"endpoint" | "result">;
  writes: CellCounter<"endpoint" | "result">;
}

const byRegistry = new WeakMap<Registry, CacheMetrics>();

/** Registered once per registry (setup runs again on every reload; names must stay unique). */
export function cacheMetrics(registry: Registry): CacheMetrics {
  let m = byRegistry.get(registry);
  if (m) return m;
  m = {
    requests: new CellCounter({
      name: "gateway_cache_requests_total",
      help: "Requests that used the response cache, by endpoint and result (hit: answered from the cache; miss: asked the provider).",
      labelNames: ["endpoint", "result"] as const,
      registers: [registry],
    }),
    writes: new CellCounter({
      name: "gateway_cache_writes_total",
      help: "Answers offered to the response cache, by endpoint and result (stored, too_large: over cache.max_entry_bytes, failed: the store refused).",
      labelNames: ["endpoint", "result"] as const,
      registers: [registry],
    }),
  };
  // Hit and miss exist from the start on every endpoint the cache serves (12 series): a series born at its first
  // count loses it to rate()/increase(), and the first hits would not show on the dashboard.
  m.requests.seed([...CACHEABLE].flatMap((endpoint) => [[endpoint, "hit"], [endpoint, "miss"]]));
  byRegistry.set(registry, m);
  return m;
}
