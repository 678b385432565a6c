// The gateway.yaml a load run uses unless one is given: one fake OpenAI-protocol provider, one model, one project
// with a live key, and an explicit pipeline (auth + router by default: the configuration the targets are set for).
// Custom files get the same values through the environment: ${MG_BENCH_UPSTREAM}, ${MG_BENCH_FLAKY_UPSTREAM},
// ${MG_BENCH_KEY_SHA256} (see bench/README.md).
import { sha256Hex } from "../../core/keys/keys.ts";
import { UPSTREAM_KEY } from "./upstream.ts";

/** The live key every load request presents; its sha256 is in the generated config. */
export const BENCH_KEY = "mg_live_bench0000000000000000000";
export const BENCH_KEY_SHA256 = sha256Hex(BENCH_KEY);
export const BENCH_MODEL = "bench/fake-model";
/** A read-scope admin key for the console a run may open (--console NAME=open). */
export const BENCH_ADMIN_KEY = "mg_admin_bench00000000000000000000";
export const BENCH_ADMIN_SHA256 = sha256Hex(BENCH_ADMIN_KEY);
/** Served by the flaky upstream first, the healthy one second (for fallback runs). */
export const BENCH_FLAKY_MODEL = "bench/flaky-first";

export interface BenchConfigOptions {
  upstream: string;
  flakyUpstream?: string;
  /** Omitted: the full default pipeline. */
  pipeline?: string[];
  store?: Record<string, unknown>;
  /** console.enabled: false (no console, no traffic sampler). */
  consoleOff?: boolean;
}

export function benchConfig(o: BenchConfigOptions): Record<string, unknown> {
  const pricing = { input: "0.00000015", output: "0.0000006" };
  const providers: Record<string, unknown> = { fake: { protocol: "openai", base_url: o.upstream, api_key: UPSTREAM_KEY } };
  const models: Record<string, unknown> = {
    [BENCH_MODEL]: { name: "Bench fake", type: "language", context_window: 128000, max_tokens: 16384, endpoints: [{ provider: "fake", model: "fake-model", pricing }] },
  };
  if (o.flakyUpstream) {
    providers.flaky = { protocol: "openai", base_url: o.flakyUpstream, api_key: UPSTREAM_KEY };
    models[BENCH_FLAKY_MODEL] = {
      name: "Bench flaky first", type: "language", context_window: 128000, max_tokens: 16384,
      endpoints: [{ provider: "flaky", model: "fake-model", pricing }, { provider: "fake", model: "fake-model", pricing }],
    };
  }
  return {
    server: { host: "127.0.0.1", port: 0 },
    store: o.store ?? { kind: "memory" },
    providers,
    models,
    projects: { bench: { keys: [{ id: "bench", sha256: BENCH_KEY_SHA256 }] } },
    admin_keys: [{ id: "bench", sha256: BENCH_ADMIN_SHA256, scope: "read" }],
    ...(o.consoleOff ? { console: { enabled: false } } : {}),
    ...(o.pipeline ? { pipeline: o.pipeline } : {}),
  };
}
