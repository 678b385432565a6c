// The soak run's gateway.yaml: the shipped shape — SQLite store, no `pipeline:` key (every built-in plugin in the
// default order), a live key with a budget and rate limits set high enough that a 10-minute run never trips them —
// in front of three fake OpenAI upstreams: healthy, flaky (HTTP 500 on a fraction, with a fallback model), and one
// that refuses every request with HTTP 400.
import { benchConfig, BENCH_MODEL } from "../load/config.ts";
import { UPSTREAM_KEY } from "../load/upstream.ts";

/** Served by the flaky upstream only; requests name BENCH_MODEL as their fallback model. */
export const FLAKY_MODEL = "soak/flaky";
/** Served by the upstream that answers 400 to everything (a request error: never retried, never a fallback). */
export const BAD_REQUEST_MODEL = "soak/bad-request";

export interface SoakConfigOptions {
  upstream: string;
  flakyUpstream: string;
  badUpstream: string;
  dbPath: string;
}

export function soakConfig(o: SoakConfigOptions): Record<string, unknown> {
  const base = benchConfig({ upstream: o.upstream }) as Record<string, any>;
  delete base.pipeline; // the full default pipeline, as shipped
  const pricing = { input: "0.00000015", output: "0.0000006" };
  const model = (name: string, provider: string) => ({
    name, type: "language", context_window: 128000, max_tokens: 16384, endpoints: [{ provider, model: "fake-model", pricing }],
  });
  base.providers.flaky = { protocol: "openai", base_url: o.flakyUpstream, api_key: UPSTREAM_KEY };
  base.providers.bad = { protocol: "openai", base_url: o.badUpstream, api_key: UPSTREAM_KEY };
  base.models[FLAKY_MODEL] = model("Soak flaky", "flaky");
  base.models[BAD_REQUEST_MODEL] = model("Soak bad request", "bad");
  base.store = { kind: "sqlite", path: o.dbPath };
  // ~0.00003 USD per request settled, 0.00015 reserved: 1000 USD is ~30 million requests. rpm well above 200 req/s.
  const limits = { rpm: 10_000_000, tpm: 10_000_000_000 };
  base.projects.bench = {
    keys: [{ id: "bench", sha256: base.projects.bench.keys[0].sha256, rate_limits: limits }],
    allow_models: ["bench/*", "soak/*"],
    budget: { usd: "1000", period: "total" },
    rate_limits: limits,
    project_rate_limits: limits,
  };
  return base;
}

export { BENCH_MODEL };
