// Health of every (model, provider) endpoint, one registry per gateway (it outlives config reloads).
// State and transitions are exported to /metrics: gateway_circuit_state and gateway_circuit_transitions_total. The
// state is read when /metrics is collected, as the listings read it (peek): an open circuit whose cooldown is over is
// half-open there though no request has come to move it, so an alert on "open" stops once the endpoint may be probed.
// Attempts made with a project's own key (BYOK) have a breaker of their own per (model, provider, project): a
// project's exhausted quota or broken base_url says nothing about the gateway's key, so it must not open the circuit
// every other project shares. Those breakers stay out of /metrics (the series would name projects, unbounded by
// default; see metrics.project_labels); their transitions are logged with the project.
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
  /** The gateway's own-key breakers with their labels: the ones /metrics shows. */
  private readonly shared: Array<{ labels: { model: string; provider: string }; breaker: CircuitBreaker }> = [];
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
      collect: () => this.collectStates(),
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

  /**
   * `project`: the project whose own key the attempt used; undefined for the gateway's key. Projects come from the
   * config, so the map stays bounded by projects x endpoints.
   */
  private breaker(model: string, provider: string, project: string | undefined): CircuitBreaker {
    const policy = this.currentPolicy();
    const key = keyOf(model, provider, project);
    let b = this.breakers.get(key);
    if (!b) {
      if (project === undefined) {
        b = new CircuitBreaker(policy, (from, to) => {
          this.transitions.inc({ model, provider, from, to });
          this.gateway.log.warn(`circuit ${to.replace("_", "-")}`, { model, provider, from });
        });
        this.shared.push({ labels: { model, provider }, breaker: b });
      } else {
        b = new CircuitBreaker(policy, (from, to) => {
          this.gateway.log.warn(`circuit ${to.replace("_", "-")} (project's own key)`, { model, provider, project, from });
        });
      }
      this.breakers.set(key, b);
    }
    return b;
  }

  /** `owner`: the request asking (a half-open probe's slot is its own, so only it may free the slot: release()). */
  allow(model: string, provider: string, project?: string, owner?: object): boolean {
    return this.breaker(model, provider, project).allow(this.now(), owner);
  }

  record(model: string, provider: string, success: boolean, project?: string): void {
    this.breaker(model, provider, project).record(success, this.now());
  }

  release(model: string, provider: string, project?: string, owner?: object): void {
    this.breakers.get(keyOf(model, provider, project))?.release(owner);
  }

  /** Milliseconds until this endpoint lets a request through again (its cooldown's end; 0 when it would now). */
  retryInMs(model: string, provider: string, project?: string): number {
    return this.breakers.get(keyOf(model, provider, project))?.retryInMs(this.now()) ?? 0;
  }

  /** At scrape time only (nothing on the request path): each endpoint's state as allow() would now find it. */
  private collectStates(): void {
    const now = this.now();
    for (const { labels, breaker } of this.shared) this.state.set(labels, STATE_VALUE[breaker.peek(now)]);
  }

  stateOf(model: string, provider: string, project?: string): CircuitState {
    return this.breakers.get(keyOf(model, provider, project))?.peek(this.now()) ?? "closed";
  }
}

const keyOf = (model: string, provider: string, project: string | undefined) =>
  project === undefined ? `${model}\n${provider}` : `${model}\n${provider}\n${project}`;

const registries = new WeakMap<GatewayHandle, HealthRegistry>();

export function healthOf(gateway: GatewayHandle): HealthRegistry {
  let h = registries.get(gateway);
  if (!h) {
    h = new HealthRegistry(gateway);
    registries.set(gateway, h);
  }
  return h;
}
