// The counter series the config determines, shown at 0 from the start and after each reload. Prometheus' rate() and
// increase() count only changes between scrapes, so a series born at its first count loses that count: the first
// 502s of a model never fire an `increase(...{code="502"}[5m]) > 0` alert, a project's first spend shows $0. The
// label sets are bounded by the config, never by traffic (README "Operating it" lists them):
// - gateway_requests_total: each routable model on its primary endpoint's provider, on every endpoint its type is
//   served on, with code 200 and 502 (the gateway's own 5xx);
// - gateway_tokens_total: the same (model, provider), input and output (language models: cache_read and cache_write
//   too when the endpoint prices them; embeddings: input);
// - gateway_upstream_duration_seconds: the same (provider, model) with outcome="error" (a histogram is 20 series per
//   label set, so its ok series is left to be born with the first answer);
// - with metrics.project_labels, the per-project series for each project whose allow_models lists exact model ids
//   (a project allowed every model, or a pattern, gets none: the cross product would grow with the catalog).
// A set a reload no longer names goes, unless it was counted meanwhile (metrics-cells.ts CellCounter.seed).
import type { Histogram } from "prom-client";
import type { RuntimeConfig, ModelRuntime } from "./config/runtime.ts";
import type { Metrics } from "./metrics.ts";
import { usageCounters } from "./metering/meter.ts";

/** The endpoints (the `endpoint` label) each model type is served on. */
const ENDPOINTS_OF: Record<ModelRuntime["type"], readonly string[]> = {
  language: ["chat", "messages", "responses", "gemini"],
  embedding: ["embeddings"],
  reranking: ["rerank"],
  image: ["images"],
  video: ["videos"],
};

/** The codes a request of a routable model is seeded with: success, and the gateway's own 5xx (upstream failed). */
const SEEDED_CODES = ["200", "502"];

export interface SeededSeries {
  requests: string[][];
  tokens: string[][];
  upstreamErrors: { provider: string; model: string }[];
  projectTokens: string[][];
  projectCost: string[][];
}

/** The label sets of `config`, each in its metric's label order. */
export function seededSeries(config: Pick<RuntimeConfig, "models" | "projects" | "metrics">): SeededSeries {
  const out: SeededSeries = { requests: [], tokens: [], upstreamErrors: [], projectTokens: [], projectCost: [] };
  const directions = new Map<string, string[]>();
  for (const m of config.models.values()) {
    const primary = m.endpoints[0];
    if (!primary) continue; // no enabled provider: not routable (sandbox keys reach it through sim, not billed)
    const provider = primary.provider;
    for (const endpoint of ENDPOINTS_OF[m.type] ?? []) for (const code of SEEDED_CODES) out.requests.push([endpoint, m.id, provider, code]);
    const dirs = m.type === "language"
      ? ["input", "output", ...(primary.pricing.input_cache_read ? ["cache_read"] : []), ...(primary.pricing.input_cache_write ? ["cache_write"] : [])]
      : m.type === "embedding" ? ["input"] : [];
    directions.set(m.id, dirs);
    for (const d of dirs) out.tokens.push([d, m.id, provider]);
    out.upstreamErrors.push({ provider, model: m.id });
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

/** The upstream histogram's seeded sets, per registry's histogram: the last seeding's, to drop those a reload no longer names. */
const seededUpstream = new WeakMap<Histogram<string>, Map<string, { provider: string; model: string; outcome: string }>>();

/** Show the upstream histogram's error series at 0; drop the last seeding's sets no longer named that saw no attempt. */
async function seedUpstream(h: Histogram<"provider" | "model" | "outcome">, sets: { provider: string; model: string }[]): Promise<void> {
  const next = new Map(sets.map((s) => [`${s.provider}\n${s.model}`, { ...s, outcome: "error" }]));
  const last = seededUpstream.get(h);
  seededUpstream.set(h, next);
  for (const labels of next.values()) h.zero(labels);
  const gone = [...(last ?? new Map()).entries()].filter(([k]) => !next.has(k)).map(([, v]) => v);
  if (!gone.length) return;
  const counts = (await h.get()).values.filter((v) => (v as { metricName?: string }).metricName?.endsWith("_count") && v.labels.outcome === "error");
  for (const labels of gone) {
    const observed = counts.find((v) => v.labels.provider === labels.provider && v.labels.model === labels.model)?.value ?? 0;
    if (observed === 0) h.remove(labels);
  }
}

/** Seed the series `config` determines (at start and after every reload). */
export async function seedConfigSeries(metrics: Metrics, config: Pick<RuntimeConfig, "models" | "projects" | "metrics">): Promise<void> {
  const s = seededSeries(config);
  metrics.requests.seed(s.requests);
  metrics.tokens.seed(s.tokens);
  // Registered only with project_labels (usage-metering's setup drops them when it goes off, and so their seeds).
  if (config.metrics.projectLabels) {
    const counters = usageCounters(metrics.registry);
    counters.tokens.seed(s.projectTokens);
    counters.cost.seed(s.projectCost);
  }
  await seedUpstream(metrics.upstream, s.upstreamErrors);
}
