// Health of every (model, provider) endpoint, one registry per gateway (it outlives config reloads).
// State and transitions are exported to /metrics: gateway_circuit_state and gateway_circuit_transitions_total.
import { Counter, Gauge } from "prom-client";
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { RoutingConfig } from "../generated/types/gateway.ts";
import { CircuitBreaker, DEFAULT_POLICY, type BreakerPolicy, type CircuitState } from "./breaker.ts";

export type { CircuitState } from "./breaker.ts";

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

export function policyFrom(routing: RoutingConfig | undefined): BreakerPolicy {
  const c = routing?.circuit_breaker ?? {};
  return {
    consecutiveFailures: c.consecutive_failures ?? DEFAULT_POLICY.consecutiveFailures,
    errorRate: c.error_rate ?? DEFAULT_POLICY.errorRate,
    minRequests: c.min_requests ?? DEFAULT_POLICY.minRequests,
    windowMs: c.window_ms ?? DEFAULT_POLICY.windowMs,
    cooldownMs: c.cooldown_ms ?? DEFAULT_POLICY.cooldownMs,
  };
}

export class HealthRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly state: Gauge<"model" | "provider">;
  private readonly transitions: Counter<"model" | "provider" | "from" | "to">;

  constructor(private readonly gateway: GatewayHandle, readonly now: () => number = Date.now) {
    const registers = [gateway.metrics.registry];
    this.state = new Gauge({
      name: "gateway_circuit_state",
      help: "Circuit breaker state per model endpoint: 0 closed, 1 half-open, 2 open.",
      labelNames: ["model", "provider"] as const,
      registers,
      aggregator: "max", // with --workers (each has its own breakers): the most open
    });
    this.transitions = new Counter({
      name: "gateway_circuit_transitions_total",
      help: "Circuit breaker state changes per model endpoint.",
      labelNames: ["model", "provider", "from", "to"] as const,
      registers,
    });
  }

  private routing: unknown = undefined;
  private policy = DEFAULT_POLICY;

  /** The thresholds of the current config; a reload applies them to every breaker, keeping their state. */
  private currentPolicy(): BreakerPolicy {
    const routing = this.gateway.config.raw.routing;
    if (routing !== this.routing) {
      this.routing = routing;
      this.policy = policyFrom(routing);
      for (const b of this.breakers.values()) b.policy = this.policy;
    }
    return this.policy;
  }

  private breaker(model: string, provider: string): CircuitBreaker {
    const policy = this.currentPolicy();
    const key = `${model}\n${provider}`;
    let b = this.breakers.get(key);
    if (!b) {
      b = new CircuitBreaker(policy, (from, to) => {
        this.transitions.inc({ model, provider, from, to });
        this.state.set({ model, provider }, STATE_VALUE[to]);
        this.gateway.log.warn(`circuit ${to.replace("_", "-")}`, { model, provider, from });
      });
      this.state.set({ model, provider }, 0);
      this.breakers.set(key, b);
    }
    return b;
  }

  allow(model: string, provider: string): boolean {
    return this.breaker(model, provider).allow(this.now());
  }

  record(model: string, provider: string, success: boolean): void {
    this.breaker(model, provider).record(success, this.now());
  }

  release(model: string, provider: string): void {
    this.breakers.get(`${model}\n${provider}`)?.release();
  }

  stateOf(model: string, provider: string): CircuitState {
    return this.breakers.get(`${model}\n${provider}`)?.peek(this.now()) ?? "closed";
  }
}

const registries = new WeakMap<GatewayHandle, HealthRegistry>();

export function healthOf(gateway: GatewayHandle): HealthRegistry {
  let h = registries.get(gateway);
  if (!h) {
    h = new HealthRegistry(gateway);
    registries.set(gateway, h);
  }
  return h;
}
