import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../pipeline/context.ts";
import { modelLabel, providerLabel, statusCode } from "./metric-labels.ts";
import { GatewayError } from "../errors.ts";

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

  it("provider: an idempotent replay is \"replay\" (no provider served it), a cache hit \"cache\"", () => {
    expect(providerLabel(ctx({ replayed: true }))).toBe("replay");
    expect(providerLabel(ctx({ resolvedProvider: "cache" }))).toBe("cache");
  });

  it("provider: with nothing tried, the endpoint skipped for an open circuit (the provider that is down)", () => {
    const skipped = [{ model: "openai/gpt-4o", provider: "a", reason: "circuit_open" }, { model: "openai/gpt-4o", provider: "b", reason: "circuit_open" }];
    const err = new GatewayError(502, "UPSTREAM_ERROR", "Every provider is failing right now (circuit open)", { details: { skipped } });
    expect(providerLabel(ctx({}), err)).toBe("b");
    const attempts = [{ provider: "c", model: "m", status: 500, latencyMs: 1 }];
    expect(providerLabel(ctx({ attempts }), err)).toBe("c"); // one that was tried names the fault first
    expect(providerLabel(ctx({}), new GatewayError(401, "UNAUTHORIZED", "no key"))).toBe("");
  });
});

describe("code label", () => {
  it("a stream that failed after its 200 went out counts as the status of its error; any other answer as sent", () => {
    const cut = new GatewayError(502, "UPSTREAM_ERROR", "the upstream closed the connection");
    expect(statusCode({ status: 200, aborted: false, streamError: cut })).toBe(502);
    expect(statusCode({ status: 200, aborted: true })).toBe(200);
    expect(statusCode({ status: 429, aborted: false, error: new GatewayError(429, "RATE_LIMITED", "slow down") })).toBe(429);
  });
});
