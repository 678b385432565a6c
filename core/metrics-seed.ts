// The counter series the config determines, shown at 0 from the start and after each reload. Prometheus' rate() and
// increase() count only changes between scrapes, so a series born at its first count loses that count: the first
// 502s of a model never fire an `increase(...{code="502"}[5m]) > 0` alert, a project's first spend shows $0. The
// label sets are bounded by the config, never by traffic (README "Operating it" lists them):
// - gateway_requests_total: each servable model on the provider a request is routed to first today (its first
//   configured endpoint not retired: the router's own order), on every endpoint its type is served on, with code 200
//   and 502 (the gateway's own 5xx, which covers a failing upstream);
// - gateway_tokens_total: the same (model, provider), input and output (language models: cache_read and cache_write
//   too when the endpoint prices them; embeddings: input);
// - with metrics.project_labels, the per-project series for each project whose allow_models lists exact model ids
//   (a project allowed every model, or a pattern, gets none: the cross product would grow with the catalog).
// A model with no endpoint left (every one retired: a 404) gets none. When a `retires:` day comes while the process
// runs, the series are seeded again at its 00:00 UTC, so they follow the router to the next endpoint. Histograms are
// not seeded: 20 series per label set, for what requests_total's code="502" already shows. A set a reload (or a
// retirement) no longer names goes, unless it was counted meanwhile (metrics-cells.ts CellCounter.seed).
import type { RuntimeConfig, ModelRuntime } from "./config/runtime.ts";
import type { Metrics } from "./metrics.ts";
import type { Logger } from "./log.ts";
import { usageCounters } from "./metering/meter.ts";
import { liveConfiguredEndpoints } from "./config/retirement.ts";

/** The endpoints (the `endpoint` label) each model type is served on. */
const ENDPOINTS_OF: Record<ModelRuntime["type"], readonly string[]> = {
  language: ["chat", "messages", "responses", "gemini"],
  embedding: ["embeddings"],
  reranking: ["rerank"],
  image: ["images"],
  video: ["videos"],
};

/** The codes a request of a servable model is seeded with: success, and the gateway's own 5xx (upstream failed). */
const SEEDED_CODES = ["200", "502"];

export interface SeededSeries {
  requests: string[][];
  tokens: string[][];
  projectTokens: string[][];
  projectCost: string[][];
}

type SeededConfig = Pick<RuntimeConfig, "models" | "projects" | "metrics">;

/** The label sets of `config` at `now`, each in its metric's label order. */
export function seededSeries(config: SeededConfig, now = Date.now()): SeededSeries {
  const out: SeededSeries = { requests: [], tokens: [], projectTokens: [], projectCost: [] };
  const directions = new Map<string, string[]>();
  for (const m of config.models.values()) {
    // The router's first target for a request with no routing options: the first live endpoint of an enabled provider.
    const primary = liveConfiguredEndpoints(m, now)[0];
    if (!primary) continue; // no enabled provider, or every endpoint retired (a 404): nothing to serve it (sandbox keys go to sim, not billed)
    const provider = primary.provider;
    for (const endpoint of ENDPOINTS_OF[m.type] ?? []) for (const code of SEEDED_CODES) out.requests.push([endpoint, m.id, provider, code]);
    const dirs = m.type === "language"
      ? ["input", "output", ...(primary.pricing.input_cache_read ? ["cache_read"] : []), ...(primary.pricing.input_cache_write ? ["cache_write"] : [])]
      : m.type === "embedding" ? ["input"] : [];
    directions.set(m.id, dirs);
    for (const d of dirs) out.tokens.push([d, m.id, provider]);
  }
  if (!config.metrics.projectLabels) return out;
  for (const p of config.projects.values()) {
    const allowed = p.config.allow_models;
    if (!allowed || allowed.some((id) => /[*?]/.test(id))) continue;
    for (const model of new Set(allowed)) {
      const dirs = directions.get(model);
      if (!dirs) continue; // not in the catalog, or not routable
      out.projectCost.push([p.id, model]);
      for (const d of dirs.filter((x) => x === "input" || x === "output")) out.projectTokens.push([p.id, model, d]);
    }
  }
  return out;
}

/** The next `retires:` instant after `now` among the config's models: the seeds change then. */
export function nextRetirement(config: Pick<RuntimeConfig, "models">, now: number): number | undefined {
  let next: number | undefined;
  for (const m of config.models.values()) {
    for (const at of m.retiresAt ?? []) if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
  }
  return next;
}

/** setTimeout's longest delay (about 24.8 days); a later day is reached by waking up and scheduling again. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** The re-seeding scheduled for each gateway's metrics: the last seeding's config replaces the one before. */
const reseeds = new WeakMap<Metrics, NodeJS.Timeout>();

export interface SeedOptions {
  /** Where a later re-seeding (at a `retires:` day) reports its failure: no caller is left to tell. */
  log?: Pick<Logger, "warn">;
  now?: number;
}

/** Seed the series `config` determines (at start and after every reload). */
export async function seedConfigSeries(metrics: Metrics, config: SeededConfig, opts: SeedOptions = {}): Promise<void> {
  const now = opts.now ?? Date.now();
  scheduleReseed(metrics, config, now, opts.log); // first: a seeding that fails still moves the zeros at the next day
  const s = seededSeries(config, now);
  metrics.requests.seed(s.requests);
  metrics.tokens.seed(s.tokens);
  // Registered only with project_labels (usage-metering's setup drops them when it goes off, and so their seeds).
  if (config.metrics.projectLabels) {
    const counters = usageCounters(metrics.registry);
    counters.tokens.seed(s.projectTokens);
    counters.cost.seed(s.projectCost);
  }
}

/**
 * Cancel the re-seeding scheduled for `metrics` (the gateway closes, or failed to start): its timer held the metrics
 * and the whole config until a `retires:` day up to 24.8 days on, and then seeded a closed gateway's series.
 */
export function stopReseeding(metrics: Metrics): void {
  clearTimeout(reseeds.get(metrics));
  reseeds.delete(metrics);
}

/** Seed again when the config's next `retires:` day comes (unref'd: it never keeps the process alive). */
function scheduleReseed(metrics: Metrics, config: SeededConfig, now: number, log: SeedOptions["log"]): void {
  stopReseeding(metrics);
  const at = nextRetirement(config, now);
  if (at === undefined) return;
  const reseed = () => seedConfigSeries(metrics, config, { log }).catch((err) => {
    log?.warn("seeding the metric series again at a retires: day failed", { error: String(err) });
  });
  const timer = setTimeout(reseed, Math.min(at - now, MAX_DELAY_MS));
  timer.unref();
  reseeds.set(metrics, timer);
}
