import { describe, expect, it } from "vitest";
import type { ModelRuntime } from "../../core/config/runtime.ts";
import type { ModelConfig } from "../../core/generated/types/gateway.ts";
import type { EndpointStats } from "../../core/stats/index.ts";
import { retirementInstants } from "../../core/config/retirement.ts";
import { applyOrder, estimateCost, planRoute, requestShape, type RouteInput } from "./route.ts";

function model(id: string, endpoints: ModelConfig["endpoints"], extra: Partial<ModelConfig> = {}): ModelRuntime {
  return { id, type: "language", config: { endpoints, context_window: 1000, max_tokens: 100, ...extra }, endpoints: [] };
}

const llama = model("meta/llama", [
  { provider: "groq", model: "llama-groq", pricing: { input: "0.0000006", output: "0.0000008" } },
  { provider: "fireworks", model: "llama-fw", pricing: { input: "0.0000009", output: "0.0000009" } },
  { provider: "deepinfra", model: "llama-di", pricing: { input: "0.0000002", output: "0.0000006" } },
]);
const gpt = model("openai/gpt", [{ provider: "openai", model: "gpt", pricing: { input: "0.000001", output: "0.000004" } }]);

const none: EndpointStats = { throughput_last_1h: null, latency_last_1h: null, uptime_last_1d: null };

function input(over: Partial<RouteInput> = {}): RouteInput {
  return {
    chain: [llama],
    now: Date.UTC(2026, 10, 28),
    options: {},
    enabled: new Set(["groq", "fireworks", "deepinfra", "openai"]),
    declared: { groq: { protocol: "openai" }, fireworks: { protocol: "openai" }, deepinfra: { protocol: "openai" }, openai: { protocol: "openai" } },
    shape: { inputTokens: 1000, outputTokens: 100 },
    stats: () => none,
    ...over,
  };
}

const providers = (i: RouteInput) => planRoute(i).map((t) => `${t.modelId}@${t.provider}`);

describe("planRoute", () => {
  it("defaults to catalog order over enabled providers", () => {
    expect(providers(input())).toEqual(["meta/llama@groq", "meta/llama@fireworks", "meta/llama@deepinfra"]);
    expect(providers(input({ enabled: new Set(["fireworks"]) }))).toEqual(["meta/llama@fireworks"]);
  });

  it("an endpoint that retires (retires: 2026-11-30) is a target until 23:59:59.999 UTC the day before, not from 00:00 that day", () => {
    const endpoints: ModelConfig["endpoints"] = [
      { provider: "anthropic", model: "claude-sonnet-4-5-20250929", retires: "2026-11-30", pricing: { input: "0.000003", output: "0.000015" } },
      { provider: "vertex", model: "claude-sonnet-4-5@20250929", pricing: { input: "0.000003", output: "0.000015" } },
    ];
    const sonnet = { ...model("anthropic/claude-sonnet-4.5", endpoints), retiresAt: retirementInstants(endpoints) };
    const at = (now: number) => providers(input({ chain: [sonnet], now, enabled: new Set(["anthropic", "vertex"]), declared: {} }));
    const day = Date.UTC(2026, 10, 30);
    expect(at(day - 2 * 86_400_000)).toEqual(["anthropic/claude-sonnet-4.5@anthropic", "anthropic/claude-sonnet-4.5@vertex"]);
    expect(at(day - 1)).toEqual(["anthropic/claude-sonnet-4.5@anthropic", "anthropic/claude-sonnet-4.5@vertex"]);
    expect(at(day)).toEqual(["anthropic/claude-sonnet-4.5@vertex"]);
    expect(at(day + 30 * 86_400_000)).toEqual(["anthropic/claude-sonnet-4.5@vertex"]);
  });

  it("only: other providers are never tried", () => {
    expect(providers(input({ options: { only: ["deepinfra", "groq"] } }))).toEqual(["meta/llama@groq", "meta/llama@deepinfra"]);
    expect(providers(input({ options: { only: ["nobody"] } }))).toEqual([]);
  });

  it("order: named providers first, in that order; the rest follow in catalog order", () => {
    expect(providers(input({ options: { order: ["deepinfra"] } }))).toEqual(["meta/llama@deepinfra", "meta/llama@groq", "meta/llama@fireworks"]);
    expect(providers(input({ options: { order: ["deepinfra", "fireworks"] } }))).toEqual(["meta/llama@deepinfra", "meta/llama@fireworks", "meta/llama@groq"]);
    expect(providers(input({ options: { order: ["unknown", "fireworks"] } }))).toEqual(["meta/llama@fireworks", "meta/llama@groq", "meta/llama@deepinfra"]);
  });

  it("order and only together: only filters, order arranges what is left", () => {
    expect(providers(input({ options: { only: ["groq", "fireworks"], order: ["deepinfra", "fireworks"] } }))).toEqual(["meta/llama@fireworks", "meta/llama@groq"]);
  });

  it("sort: cost uses this request's shape", () => {
    // input-heavy: deepinfra (0.2) < groq (0.6) < fireworks (0.9)
    expect(providers(input({ options: { sort: "cost" } }))).toEqual(["meta/llama@deepinfra", "meta/llama@groq", "meta/llama@fireworks"]);
    // output-heavy with a different price shape: groq out is 0.8, fireworks 0.9, a new host with cheap output wins
    const m = model("x/y", [
      { provider: "groq", model: "a", pricing: { input: "0.000001", output: "0.000002" } },
      { provider: "fireworks", model: "b", pricing: { input: "0.000003", output: "0.000001" } },
    ]);
    expect(providers(input({ chain: [m], options: { sort: "cost" }, shape: { inputTokens: 10, outputTokens: 5000 } }))).toEqual(["x/y@fireworks", "x/y@groq"]);
    expect(providers(input({ chain: [m], options: { sort: "cost" }, shape: { inputTokens: 5000, outputTokens: 10 } }))).toEqual(["x/y@groq", "x/y@fireworks"]);
  });

  it("sort: cost prices a prompt over an endpoint's long-prompt threshold at that tier", () => {
    // groq is cheaper up to 1000 prompt tokens, but doubles above them; fireworks is flat.
    const m = model("x/long", [
      { provider: "groq", model: "a", pricing: { input: "0.000001", output: "0.000001", long_context: { above_input_tokens: 1000, input: "0.000004" } } },
      { provider: "fireworks", model: "b", pricing: { input: "0.000002", output: "0.000001" } },
    ]);
    expect(providers(input({ chain: [m], options: { sort: "cost" }, shape: { inputTokens: 1000, outputTokens: 10 } }))).toEqual(["x/long@groq", "x/long@fireworks"]);
    expect(providers(input({ chain: [m], options: { sort: "cost" }, shape: { inputTokens: 1001, outputTokens: 10 } }))).toEqual(["x/long@fireworks", "x/long@groq"]);
  });

  it("sort: cost ties and unpriced endpoints keep catalog order, unpriced last", () => {
    const m = model("x/y", [
      { provider: "openai", model: "free" },
      { provider: "groq", model: "a", pricing: { input: "0.000001", output: "0.000001" } },
      { provider: "fireworks", model: "b", pricing: { input: "0.000001", output: "0.000001" } },
    ]);
    expect(providers(input({ chain: [m], options: { sort: "cost" } }))).toEqual(["x/y@groq", "x/y@fireworks", "x/y@openai"]);
  });

  it("sort: ttft and tps use live stats; endpoints without data go last in catalog order", () => {
    const stats = (_m: string, p: string): EndpointStats => ({
      ...none,
      latency_last_1h: p === "fireworks" ? { p50: 120, p95: 300 } : p === "deepinfra" ? { p50: 400, p95: 900 } : null,
      throughput_last_1h: p === "groq" ? { p50: 500, p95: 700 } : p === "deepinfra" ? { p50: 80, p95: 90 } : null,
    });
    expect(providers(input({ stats, options: { sort: "ttft" } }))).toEqual(["meta/llama@fireworks", "meta/llama@deepinfra", "meta/llama@groq"]);
    expect(providers(input({ stats, options: { sort: "tps" } }))).toEqual(["meta/llama@groq", "meta/llama@deepinfra", "meta/llama@fireworks"]);
  });

  it("order wins over sort; the rest stay sorted", () => {
    expect(providers(input({ options: { sort: "cost", order: ["fireworks"] } }))).toEqual(["meta/llama@fireworks", "meta/llama@deepinfra", "meta/llama@groq"]);
  });

  it("models: the request's model first, then each fallback model with its own providers", () => {
    expect(providers(input({ chain: [gpt, llama], options: { order: ["fireworks"] } }))).toEqual([
      "openai/gpt@openai", "meta/llama@fireworks", "meta/llama@groq", "meta/llama@deepinfra",
    ]);
    // only applies to every model of the chain: a model left without providers is skipped
    expect(providers(input({ chain: [gpt, llama], options: { only: ["groq"] } }))).toEqual(["meta/llama@groq"]);
  });

  it("byok: the project's credentials replace the gateway's, bounded by providerTimeouts.byok", () => {
    const t = planRoute(input({
      byok: { groq: { api_key: "gsk-project" }, fireworks: { api_key: "fw-project", base_url: "https://proxy.example/v1", timeout_ms: 9000 } },
      options: { providerTimeouts: { byok: { groq: 1500, deepinfra: 100 } } },
    }));
    expect(t[0]).toMatchObject({ provider: "groq", credentials: { apiKey: "gsk-project" }, timeoutMs: 1500 });
    expect(t[1]).toMatchObject({ provider: "fireworks", credentials: { apiKey: "fw-project", baseUrl: "https://proxy.example/v1" }, timeoutMs: 9000 });
    // no key of its own for deepinfra: the gateway's credentials, and the byok timeout does not apply
    expect(t[2]!.credentials).toBeUndefined();
    expect(t[2]!.timeoutMs).toBeUndefined();
  });

  it("byok: a project key makes a provider usable that the gateway has no key for; an empty key does not", () => {
    const i = input({ enabled: new Set(["groq"]), byok: { deepinfra: { api_key: "di-project" }, fireworks: { api_key: "" } } });
    expect(providers(i)).toEqual(["meta/llama@groq", "meta/llama@deepinfra"]);
    expect(planRoute(i)[1]!.credentials).toEqual({ apiKey: "di-project" });
  });

  it("byok combined with only and sort", () => {
    const i = input({ byok: { fireworks: { api_key: "k" } }, options: { only: ["fireworks", "groq"], sort: "cost" } });
    const t = planRoute(i);
    expect(t.map((x) => x.provider)).toEqual(["groq", "fireworks"]);
    expect(t[1]!.credentials?.apiKey).toBe("k");
  });

  it("reasoning_model reaches the target as set, false included (it overrides the driver's recognition of the id)", () => {
    const o = (flag?: boolean) => model("acme/o", [{ provider: "openai", model: "o4-mini", ...(flag === undefined ? {} : { reasoning_model: flag }) }]);
    expect(planRoute(input({ chain: [o()] }))[0]!.reasoningModel).toBeUndefined();
    expect(planRoute(input({ chain: [o(false)] }))[0]!.reasoningModel).toBe(false);
    expect(planRoute(input({ chain: [o(true)] }))[0]!.reasoningModel).toBe(true);
  });
});

describe("helpers", () => {
  it("applyOrder keeps duplicates of the order list harmless", () => {
    const ts = planRoute(input());
    expect(applyOrder(ts, ["fireworks", "fireworks"]).map((t) => t.provider)).toEqual(["fireworks", "groq", "deepinfra"]);
  });

  it("estimateCost prices the request shape; unknown prices are undefined", () => {
    const [groq] = planRoute(input());
    expect(estimateCost(groq!, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBeCloseTo(1.4, 6);
    expect(estimateCost({ ...groq!, pricing: {} }, { inputTokens: 10, outputTokens: 10 })).toBeUndefined();
    expect(estimateCost({ ...groq!, pricing: { image: "0.04" } }, { inputTokens: 0, outputTokens: 0, images: 2 })).toBeCloseTo(0.08, 6);
  });

  it("requestShape reads the fields that drive cost per endpoint", () => {
    expect(requestShape("chat", { messages: [{ role: "user", content: "x".repeat(400) }], max_tokens: 50 }).outputTokens).toBe(50);
    expect(requestShape("chat", { messages: [] }).outputTokens).toBe(500);
    expect(requestShape("embeddings", { input: ["a".repeat(40)] })).toMatchObject({ outputTokens: 0 });
    expect(requestShape("images", { prompt: "cat", n: 3 }).images).toBe(3);
    expect(requestShape("rerank", { query: "q", documents: ["a"] }).searchUnits).toBe(1);
  });
});
