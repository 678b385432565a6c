// The seeded series follow the router: a model's zeros are on the provider a request is sent to first today (past a
// retired endpoint), a model nothing can serve any more gets none, and when a `retires:` day comes while the process
// runs the zeros move at its 00:00 UTC. The upstream histogram is not seeded.
import { afterEach, describe, expect, it, vi } from "vitest";
import { Metrics } from "./metrics.ts";
import { nextRetirement, seedConfigSeries, seededSeries, stopReseeding } from "./metrics-seed.ts";
import { retirementInstants } from "./config/retirement.ts";
import type { ModelConfig } from "./generated/types/gateway.ts";
import type { ModelRuntime, RuntimeConfig } from "./config/runtime.ts";

const DAY = Date.UTC(2026, 10, 30);

function model(id: string, endpoints: ModelConfig["endpoints"]): ModelRuntime {
  return {
    id, type: "language", config: { endpoints }, retiresAt: retirementInstants(endpoints),
    endpoints: endpoints.map((ep) => ({ provider: ep.provider, upstreamModel: ep.model, pricing: {} })),
  } as unknown as ModelRuntime;
}

const config = {
  models: new Map([
    ["acme/moving", model("acme/moving", [{ provider: "anthropic", model: "c", retires: "2026-11-30" }, { provider: "vertex", model: "c@1" }])],
    ["acme/ending", model("acme/ending", [{ provider: "anthropic", model: "e", retires: "2026-11-30" }])],
  ]),
  projects: new Map(),
  metrics: { projectLabels: false },
} as unknown as Pick<RuntimeConfig, "models" | "projects" | "metrics">;

const providersOf = (rows: string[][], model: string) => [...new Set(rows.filter((r) => r[1] === model).map((r) => r[2]))];

afterEach(() => vi.useRealTimers());

describe("seededSeries", () => {
  it("seeds a model on its first endpoint not retired, and a model with none left not at all", () => {
    const before = seededSeries(config, DAY - 1);
    expect(providersOf(before.requests, "acme/moving")).toEqual(["anthropic"]);
    expect(providersOf(before.requests, "acme/ending")).toEqual(["anthropic"]);
    const after = seededSeries(config, DAY);
    expect(providersOf(after.requests, "acme/moving")).toEqual(["vertex"]);
    expect(after.tokens.filter((t) => t[1] === "acme/moving").map((t) => t[2])).toEqual(["vertex", "vertex"]);
    expect(providersOf(after.requests, "acme/ending")).toEqual([]);
    expect(after.tokens.filter((t) => t[1] === "acme/ending")).toEqual([]);
    expect(nextRetirement(config, DAY - 1)).toBe(DAY);
    expect(nextRetirement(config, DAY)).toBeUndefined();
  });

  it("moves the zeros when the retires: day comes while the gateway runs, and seeds no upstream histogram", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"], now: DAY - 60_000 });
    const metrics = new Metrics();
    await seedConfigSeries(metrics, config);
    const line = (provider: string, model: string) => `gateway_requests_total{endpoint="chat",model="${model}",provider="${provider}",code="200"} 0`;
    let text = await metrics.registry.metrics();
    expect(text).toContain(line("anthropic", "acme/moving"));
    expect(text).toContain(line("anthropic", "acme/ending"));
    expect(text).not.toContain("gateway_upstream_duration_seconds_count{");
    await vi.advanceTimersByTimeAsync(60_000);
    text = await metrics.registry.metrics();
    expect(text).toContain(line("vertex", "acme/moving"));
    expect(text).not.toContain('provider="anthropic"');
    expect(text).not.toContain('model="acme/ending"');
  });

  it("stopReseeding (a gateway closing) cancels the re-seed: the closed gateway's zeros stay, no timer is left", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"], now: DAY - 60_000 });
    const metrics = new Metrics();
    await seedConfigSeries(metrics, config);
    expect(vi.getTimerCount()).toBe(1);
    stopReseeding(metrics);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await metrics.registry.metrics()).not.toContain('provider="vertex"');
  });

  it("logs a re-seed that fails at the retires: day, and still re-arms for the next one", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"], now: DAY - 60_000 });
    const later = Date.UTC(2026, 11, 31);
    const two = {
      ...config,
      models: new Map([...config.models, ["acme/later", model("acme/later", [{ provider: "anthropic", model: "l", retires: "2026-12-31" }, { provider: "vertex", model: "l@1" }])]]),
    } as typeof config;
    const metrics = new Metrics();
    const warn = vi.fn();
    await seedConfigSeries(metrics, two, { log: { warn } });
    const seed = vi.spyOn(metrics.requests, "seed").mockImplementationOnce(() => { throw new Error("registry full"); });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(warn).toHaveBeenCalledWith("seeding the metric series again at a retires: day failed", { error: "Error: registry full" });
    seed.mockRestore();
    await vi.advanceTimersByTimeAsync(later - DAY);
    expect(await metrics.registry.metrics()).toContain('gateway_requests_total{endpoint="chat",model="acme/later",provider="vertex",code="200"} 0');
    stopReseeding(metrics);
  });
});
