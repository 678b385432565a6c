import { describe, expect, it } from "vitest";
import type { GatewayConfig, ModelConfig } from "../generated/types/gateway.ts";
import type { ModelRuntime } from "./runtime.ts";
import { fullyRetired, liveEndpoints, retiredEndpoint, retirementInstant, retirementInstants, retirementNotices } from "./retirement.ts";

const DAY = Date.UTC(2026, 10, 30);
const H = 3_600_000;

function runtime(id: string, endpoints: ModelConfig["endpoints"]): ModelRuntime {
  const at = retirementInstants(endpoints);
  return { id, type: "language", config: { endpoints }, endpoints: [], ...(at ? { retiresAt: at } : {}) };
}

const sonnet = runtime("anthropic/claude-sonnet-4.5", [
  { provider: "anthropic", model: "claude-sonnet-4-5-20250929", retires: "2026-11-30", replacement: "anthropic/claude-sonnet-4.6" },
  { provider: "vertex", model: "claude-sonnet-4-5@20250929" },
]);
const only = runtime("acme/old", [{ provider: "anthropic", model: "claude-old", retires: "2026-11-30" }]);

describe("retirement", () => {
  it("a day is 00:00 UTC of it; a day the calendar has not is refused", () => {
    expect(retirementInstant("2026-11-30")).toBe(DAY);
    expect(retirementInstant("2026-02-30")).toBeNaN();
    expect(retirementInstant("2026-13-01")).toBeNaN();
    expect(retirementInstants([{ provider: "openai", model: "gpt-4o" }])).toBeUndefined();
  });

  it("before, at and after the day: the endpoint is live, then gone; a model with none left is fully retired", () => {
    expect(liveEndpoints(sonnet, DAY - 1).map((e) => e.provider)).toEqual(["anthropic", "vertex"]);
    expect(liveEndpoints(sonnet, DAY).map((e) => e.provider)).toEqual(["vertex"]);
    expect(liveEndpoints(sonnet, DAY + 400 * 24 * H).map((e) => e.provider)).toEqual(["vertex"]);
    expect(retiredEndpoint(sonnet, DAY - 1)).toBeUndefined();
    expect(retiredEndpoint(sonnet, DAY)?.provider).toBe("anthropic");
    expect(fullyRetired(sonnet, DAY)).toBe(false);
    expect([fullyRetired(only, DAY - 1), fullyRetired(only, DAY)]).toEqual([false, true]);
  });

  it("notices: a configured endpoint within 30 days, with its day; an operator entry on the same id, before and after", () => {
    const config = { models: {
      "anthropic/claude-sonnet-4.5": sonnet.config,
      "acme/sonnet": { endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5-20250929" }] },
    } } as unknown as GatewayConfig;
    const on = () => true;
    const before = retirementNotices(config, on, DAY - 36 * H);
    expect(before[0]).toBe("model anthropic/claude-sonnet-4.5: endpoint anthropic/claude-sonnet-4-5-20250929 retires on 2026-11-30 (in 2 days);" +
      " from then the gateway sends it no requests and serves anthropic/claude-sonnet-4.5 from vertex; suggested replacement: anthropic/claude-sonnet-4.6");
    expect(before[1]).toMatch(/^model acme\/sonnet: .* retiring on 2026-11-30; this entry has no retires: of its own, so the gateway keeps sending it requests; suggested/);
    const after = retirementNotices(config, on, DAY + H);
    expect(after).toHaveLength(1);
    expect(after[0]).toContain("keeps sending it requests, which the provider no longer serves");
    expect(retirementNotices(config, (p) => p !== "anthropic", DAY - 36 * H)).toEqual([]);
    expect(retirementNotices(config, on, DAY - 31 * 24 * H)).toEqual([]);
  });

  it("notices: the operator's own entry replacing a catalog one under its id (the README's way to customise), and one on a provider of another name at the same host", () => {
    const providers = {
      anthropic: { protocol: "anthropic", base_url: "https://api.anthropic.com" },
      claude: { protocol: "anthropic", base_url: "https://api.anthropic.com/" },
      elsewhere: { protocol: "anthropic", base_url: "https://claude.example.com" },
    };
    const mine = { endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } }] };
    const config = { providers, models: {
      "anthropic/claude-sonnet-4.5": mine,
      "acme/direct": { endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929" }] },
      "acme/proxied": { endpoints: [{ provider: "elsewhere", model: "claude-sonnet-4-5-20250929" }] },
    } } as unknown as GatewayConfig;
    const replaced = { "anthropic/claude-sonnet-4.5": sonnet.config };
    const said = retirementNotices(config, () => true, DAY - 36 * H, replaced);
    expect(said).toEqual([
      "model anthropic/claude-sonnet-4.5: endpoint anthropic/claude-sonnet-4-5-20250929 is the upstream id the catalog's entry this one replaces marks" +
        " as retiring on 2026-11-30; this entry has no retires: of its own, so the gateway keeps sending it requests; suggested replacement: anthropic/claude-sonnet-4.6",
      "model acme/direct: endpoint claude/claude-sonnet-4-5-20250929 is the upstream id anthropic/claude-sonnet-4.5 marks" +
        " as retiring on 2026-11-30; this entry has no retires: of its own, so the gateway keeps sending it requests; suggested replacement: anthropic/claude-sonnet-4.6",
    ]);
    // Without what it replaced, the entry says nothing of the day.
    expect(retirementNotices(config, () => true, DAY - 36 * H)).toEqual([]);
  });
});
