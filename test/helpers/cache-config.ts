// A gateway.yaml for the response cache tests, in the shape that ships: the SQLite store, the full default pipeline,
// live keys with a budget and rate limits. One fake OpenAI upstream answers chat (and, translated, messages, responses
// and Gemini generateContent); one fake Cohere answers embeddings and rerank.
import { join } from "node:path";
import { keyEntry, testKey } from "./gateway.ts";
import { RERANK_KEY } from "../upstreams/rerankers.ts";

export const CACHE_KEY = testKey("cacheacme");
export const CACHE_SANDBOX = testKey("cacheacmesb", true);
export const CACHE_OTHER = testKey("cacheother");
export const CACHE_ALWAYS = testKey("cachealways");
export const CACHE_OFF = testKey("cacheoff");
export const CACHE_RPM = testKey("cacherpm");
export const CACHE_TPM = testKey("cachetpm");

export const CHAT_MODEL = "openai/gpt-4o-mini";
export const EMBED_MODEL = "cohere/embed-v4";
export const RERANK_MODEL = "cohere/rerank-v3.5";

const limits = { rpm: 10_000, tpm: 100_000_000 };

export function cacheConfig(o: { openai: string; cohere: string; dir: string; store?: Record<string, unknown>; cache?: Record<string, unknown>; acmeCache?: Record<string, unknown> }) {
  return {
    store: { kind: "sqlite", path: join(o.dir, "gateway.db"), spool_dir: join(o.dir, "spool"), ...o.store },
    ...(o.cache ? { cache: o.cache } : {}),
    providers: {
      up: { protocol: "openai", base_url: o.openai, api_key: "sk-fake-upstream" },
      cohere: { protocol: "cohere", base_url: o.cohere, api_key: RERANK_KEY },
    },
    models: {
      [CHAT_MODEL]: {
        type: "language", context_window: 100_000, max_tokens: 1000,
        endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }],
      },
      "openai/gpt-4o": {
        type: "language", context_window: 100_000, max_tokens: 1000,
        endpoints: [{ provider: "up", model: "gpt-4o", pricing: { input: "0.00001", output: "0.00002" } }],
      },
      [EMBED_MODEL]: {
        type: "embedding", context_window: 128000, dimensions: 1536, limits: { dimensions: "native", dimension_values: [256, 512, 1024, 1536] },
        endpoints: [{ provider: "cohere", model: "embed-v4.0", pricing: { input: "0.0000001" } }],
      },
      [RERANK_MODEL]: { type: "reranking", endpoints: [{ provider: "cohere", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
    },
    projects: {
      acme: {
        keys: [keyEntry("k1", CACHE_KEY), keyEntry("sandbox", CACHE_SANDBOX)],
        budget: { usd: "100", period: "month" }, rate_limits: limits, project_rate_limits: limits,
        cache: { ttl_seconds: 600, ...o.acmeCache },
      },
      other: { keys: [keyEntry("k2", CACHE_OTHER)], budget: { usd: "100" }, rate_limits: limits, cache: {} },
      always: { keys: [keyEntry("k3", CACHE_ALWAYS)], budget: { usd: "100" }, rate_limits: limits, cache: { mode: "always" } },
      nocache: { keys: [keyEntry("k4", CACHE_OFF)], budget: { usd: "100" }, rate_limits: limits },
      rpm: { keys: [keyEntry("k5", CACHE_RPM)], rate_limits: { rpm: 3 }, cache: { mode: "always" } },
      tpm: { keys: [keyEntry("k6", CACHE_TPM)], rate_limits: { tpm: 300 }, cache: { mode: "always" } },
    },
  };
}

/** providerOptions that opt a request into the cache. */
export const optIn = (cache: unknown = true) => ({ providerOptions: { gateway: { cache } } });
