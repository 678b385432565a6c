// Test helpers for the guardrails' unit tests: a GuardRun on a minimal context (a real metrics registry, so notes are
// counted as in production) for a guardrails config.
import type { GuardrailsConfig } from "../../core/generated/types/gateway.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { Metrics } from "../../core/metrics.ts";
import { compile } from "./compile.ts";
import { GuardRun } from "./check.ts";

export function runFor(config: GuardrailsConfig, protocol: GatewayContext["protocol"] = "openai"): GuardRun {
  const guard = compile(config);
  if (!guard) throw new Error("config has no guardrails");
  const ctx = { protocol, requestId: "req_1", gateway: { metrics: new Metrics() } } as unknown as GatewayContext;
  return new GuardRun(ctx, guard);
}
