// Test and bench helpers: a GuardRun on a minimal context (a real metrics registry, so notes are counted as in
// production) for a guardrails config. A context can be shared, as requests share the gateway's registry.
import type { GuardrailsConfig } from "../../core/generated/types/gateway.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { Metrics } from "../../core/metrics.ts";
import { guardFor } from "./compile.ts";
import { GuardRun } from "./check.ts";

export function guardContext(protocol: GatewayContext["protocol"] = "openai"): GatewayContext {
  return { protocol, requestId: "req_1", signal: new AbortController().signal, gateway: { metrics: new Metrics() } } as unknown as GatewayContext;
}

/** A run as one request gets it: the config compiled once (cached), the run and its vault new. */
export function runFor(config: GuardrailsConfig, protocol: GatewayContext["protocol"] = "openai", ctx = guardContext(protocol)): GuardRun {
  const guard = guardFor(config);
  if (!guard) throw new Error("config has no guardrails");
  if (ctx.guardrail) delete ctx.guardrail;
  return new GuardRun(ctx, guard);
}
