import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { HealthRegistry } from "./index.ts";
import type { Gateway } from "../gateway.ts";

function fakeGateway(routing: unknown) {
  const gw = { config: { raw: { routing } }, metrics: { registry: new Registry() }, log: { warn() {} } };
  return gw as unknown as Gateway & { config: { raw: { routing: unknown } } };
}

describe("HealthRegistry", () => {
  it("keeps one breaker per (model, provider) and exports state and transitions", async () => {
    let now = 0;
    const gw = fakeGateway({ circuit_breaker: { consecutive_failures: 2, cooldown_ms: 100 } });
    const h = new HealthRegistry(gw, () => now);
    h.record("m", "a", false);
    h.record("m", "a", false);
    expect(h.stateOf("m", "a")).toBe("open");
    expect(h.stateOf("m", "b")).toBe("closed");
    expect(h.allow("m", "a")).toBe(false);
    expect(h.allow("other", "a")).toBe(true);
    const text = await gw.metrics.registry.metrics();
    expect(text).toContain('gateway_circuit_state{model="m",provider="a"} 2');
    expect(text).toContain('gateway_circuit_transitions_total{model="m",provider="a",from="closed",to="open"} 1');
    now = 150;
    expect(h.stateOf("m", "a")).toBe("half_open");
  });

  it("/metrics reads 1 (half-open) once the cooldown is over, as the listings do, though no request came to move it", async () => {
    let now = 0;
    const gw = fakeGateway({ circuit_breaker: { consecutive_failures: 1, cooldown_ms: 100 } });
    const h = new HealthRegistry(gw, () => now);
    h.record("m", "a", false);
    const gauge = async () => (await gw.metrics.registry.metrics()).split("\n").find((l) => l.startsWith('gateway_circuit_state{model="m",provider="a"}'));
    expect(await gauge()).toBe('gateway_circuit_state{model="m",provider="a"} 2');
    now = 100; // the endpoint is idle: nothing called allow()
    expect(h.stateOf("m", "a")).toBe("half_open");
    expect(await gauge()).toBe('gateway_circuit_state{model="m",provider="a"} 1');
    // Reading it neither takes the probe slot nor moves the breaker: the next request is still let through as the probe.
    expect(h.allow("m", "a")).toBe(true);
    expect(h.allow("m", "a")).toBe(false);
    h.record("m", "a", true);
    expect(await gauge()).toBe('gateway_circuit_state{model="m",provider="a"} 0');
  });

  it("a config reload applies new thresholds to existing breakers", () => {
    const gw = fakeGateway({ circuit_breaker: { consecutive_failures: 10 } });
    const h = new HealthRegistry(gw, () => 0);
    h.record("m", "a", false);
    h.record("m", "a", false);
    expect(h.stateOf("m", "a")).toBe("closed");
    gw.config.raw.routing = { circuit_breaker: { consecutive_failures: 3 } };
    h.record("m", "a", false);
    expect(h.stateOf("m", "a")).toBe("open");
  });

  it("a project's own key has a breaker of its own, kept out of the shared one and out of /metrics", async () => {
    const gw = fakeGateway({ circuit_breaker: { consecutive_failures: 2 } });
    const h = new HealthRegistry(gw, () => 0);
    h.record("m", "a", false, "acme");
    h.record("m", "a", false, "acme");
    expect(h.allow("m", "a", "acme")).toBe(false);
    expect(h.allow("m", "a")).toBe(true); // every other project, on the gateway's key
    expect(h.allow("m", "a", "other")).toBe(true);
    h.record("m", "a", false);
    h.record("m", "a", false);
    expect(h.allow("m", "a")).toBe(false);
    const text = await gw.metrics.registry.metrics();
    expect(text).not.toContain("acme");
    expect(text).toContain('gateway_circuit_transitions_total{model="m",provider="a",from="closed",to="open"} 1');
  });
});
