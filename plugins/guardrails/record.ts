// What a guardrail's action leaves behind: a note on the request (the ledger record and the access log read it), a
// count in gateway_guardrail_actions_total{rule,action}, and for a block the error the client gets, in the spec's
// envelope, naming the rule and never the text it matched.
import type { Registry } from "prom-client";
import { CellCounter } from "../../core/metrics-cells.ts";
import { DO_NOT_RETRY, GatewayError } from "../../core/errors.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

export type NotedAction = "block" | "redact" | "flag";
export type Side = "input" | "output";

const counters = new WeakMap<Registry, CellCounter<"rule" | "action">>();

/** The counter, registered once per registry (setup runs again on every reload). */
export function actionCounter(registry: Registry): CellCounter<"rule" | "action"> {
  let c = counters.get(registry);
  if (!c) {
    c = new CellCounter({
      name: "gateway_guardrail_actions_total",
      help: "Requests a guardrail rule acted on, by rule and action (block, redact, flag).",
      labelNames: ["rule", "action"] as const,
      registers: [registry],
    });
    counters.set(registry, c);
  }
  return c;
}

/** Note that `rule` acted on this request (once per rule and action: a request with ten e-mails counts one redaction). */
export function note(ctx: GatewayContext, rule: string, action: NotedAction): void {
  const entry = `${action}:${rule}`;
  const g = (ctx.guardrail ??= { actions: [] });
  if (g.actions.includes(entry)) return;
  g.actions.push(entry);
  actionCounter(ctx.gateway.metrics.registry).add(1, rule, action);
}

/** The refusal: noted, and the 400 that names the rule and the side it was found on. */
export function blocked(ctx: GatewayContext, rule: string, side: Side, extra: Record<string, unknown> = {}): GatewayError {
  note(ctx, rule, "block");
  ctx.guardrail!.blocked ??= rule;
  const what = side === "input" ? "The request was" : "The answer was";
  return new GatewayError(400, "GUARDRAIL_BLOCKED", `${what} blocked by guardrail "${rule}"`, { details: { rule, on: side, ...extra } });
}

/**
 * Moderation failed and the project chose fail_closed. A transient failure (a timeout, the moderation's 429 or 5xx)
 * is a 503 the client may retry. One a retry would meet again (the moderation provider refusing the gateway's key,
 * model or URL; a judge that cannot be called) is a 502 with x-should-retry: false: each SDK retry of an output-side
 * failure would run, and bill, a whole generation again, for the same refusal.
 * Noted as `block:<rule>-unavailable` (record, access log, metric): an outage, which an alert on the rule's content
 * blocks must not count; the client's error still names the guardrail that could not check.
 */
export function unavailable(ctx: GatewayContext, rule: string, side: Side, reason: string, retryable: boolean): GatewayError {
  const noted = `${rule}-unavailable`;
  note(ctx, noted, "block");
  ctx.guardrail!.blocked ??= noted;
  const what = `Guardrail "${rule}" could not check the ${side === "input" ? "request" : "answer"} (${reason})`;
  if (!retryable) return new GatewayError(502, "GUARDRAIL_UNAVAILABLE", what, { details: { rule, on: side }, headers: DO_NOT_RETRY });
  return new GatewayError(503, "GUARDRAIL_UNAVAILABLE", `${what}; try again`, { details: { rule, on: side }, retryAfter: 1, retryable: true });
}
