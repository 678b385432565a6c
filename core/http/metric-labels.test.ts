import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../pipeline/context.ts";
import { modelLabel, providerLabel } from "./metric-labels.ts";

const models = new Map([["openai/gpt-4o", { id: "openai/gpt-4o" }], ["openai/gpt-4o-mini", { id: "openai/gpt-4o-mini" }]]);
const ctx = (over: Partial<GatewayContext>) => ({ config: { models }, attempts: [], body: undefined, ...over }) as unknown as GatewayContext;

describe("request series labels", () => {
  it("model: the served one, else the catalog model asked for, else unknown (never the client's string), else empty", () => {
    expect(modelLabel(ctx({ model: models.get("openai/gpt-4o-mini") as never, body: { model: "openai/gpt-4o" } }))).toBe("openai/gpt-4o-mini");
    expect(modelLabel(ctx({ body: { model: "openai/gpt-4o" } }))).toBe("openai/gpt-4o"); // refused before routing
    expect(modelLabel(ctx({ body: { model: "a/b-" + "x".repeat(500) } }))).toBe("unknown");
    expect(modelLabel(ctx({ body: { model: 42 } }))).toBe("");
    expect(modelLabel(ctx({}))).toBe("");
  });

  it("provider: the one that served, else the last one tried, else empty", () => {
    const attempts = [{ provider: "a", model: "m", status: 500, latencyMs: 1 }, { provider: "b", model: "m", status: 502, latencyMs: 1 }];
    expect(providerLabel(ctx({ resolvedProvider: "c", attempts }))).toBe("c");
    expect(providerLabel(ctx({ attempts }))).toBe("b");
    expect(providerLabel(ctx({}))).toBe("");
  });
});
