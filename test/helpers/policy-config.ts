// A gateway.yaml for the policy tests: one fake OpenAI upstream, a language and an embedding model with prices,
// and projects with allowlists, budgets and rate limits.
import { keyEntry, testKey } from "./gateway.ts";

export const KEY = testKey("acme");
export const SANDBOX = testKey("acmesb", true);
export const OTHER = testKey("other");

/** Prices: input $0.000001/token, output $0.000002/token; max_tokens 100, so a small request may cost ~ $0.0003. */
export function policyConfig(upstream: string, over: { store?: Record<string, unknown>; acme?: Record<string, unknown>; other?: Record<string, unknown>; pipeline?: string[] } = {}) {
  return {
    store: over.store ?? { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: upstream, api_key: "sk-fake-upstream" } },
    models: {
      "openai/gpt-4o-mini": {
        type: "language", context_window: 1000, max_tokens: 100,
        endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }],
      },
      "openai/gpt-4o": {
        type: "language", context_window: 1000, max_tokens: 100,
        endpoints: [{ provider: "up", model: "gpt-4o", pricing: { input: "0.00001", output: "0.00002" } }],
      },
      "anthropic/claude-x": {
        type: "language", context_window: 1000, max_tokens: 100,
        endpoints: [{ provider: "up", model: "claude-x", pricing: { input: "0.000003", output: "0.000015" } }],
      },
      "openai/text-embedding-3-small": {
        type: "embedding", context_window: 8191,
        endpoints: [{ provider: "up", model: "text-embedding-3-small", pricing: { input: "0.00000002" } }],
      },
    },
    projects: {
      acme: { keys: [keyEntry("k1", KEY), keyEntry("sandbox", SANDBOX)], allow_models: ["openai/*"], ...over.acme },
      other: { keys: [keyEntry("k2", OTHER)], ...over.other },
    },
    ...(over.pipeline ? { pipeline: over.pipeline } : {}),
    metrics: { project_labels: true }, // the metering tests read the per-project series
  };
}

export const chat = (model = "openai/gpt-4o-mini", extra: Record<string, unknown> = {}) => ({
  model, messages: [{ role: "user", content: "Hello there" }], max_tokens: 20, ...extra,
});

export const auth = (key = KEY, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });
