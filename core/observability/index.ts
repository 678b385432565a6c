// Per-request observation: the access log line and the trace, started with the request and finished with it.
// Both are decided once per gateway; when both are off, observe() returns undefined and costs one lookup.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway.ts";
import type { EndpointSpec } from "../endpoints/spec.ts";
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import { accessRecord } from "./access-log.ts";
import { otlpTarget, withoutUserinfo } from "./otlp-target.ts";
import { proxyFor } from "../net/egress-proxy.ts";
import { otlpProxyAgents } from "./otlp-proxy.ts";
import type { Tracing } from "./tracing.ts";
import { TracingSetupError } from "./tracing-setup-error.ts";
import { wireBytes } from "./wire-bytes.ts";
import { accessLogOn } from "./access-log-on.ts";
import { traceIdOfHeader } from "./traceparent.ts";

interface GatewayObservability {
  tracing?: Tracing;
}

const NONE: GatewayObservability = {};
const byGateway = new WeakMap<Gateway, GatewayObservability>();

/** The gateway's tracer, once startObservability has made it; none before or without `telemetry:`. */
export function observabilityOf(gateway: Gateway): GatewayObservability {
  return byGateway.get(gateway) ?? NONE;
}

/**
 * Makes the gateway's tracer (from `telemetry:` or OTEL_EXPORTER_OTLP_*) as it starts; closed with the gateway. The
 * OpenTelemetry packages are imported only then.
 */
export async function startObservability(gateway: Gateway): Promise<void> {
  if (byGateway.has(gateway)) return;
  const o: GatewayObservability = {};
  byGateway.set(gateway, o);
  const telemetry = gateway.config.raw.telemetry;
  const target = otlpTarget(telemetry);
  if (!target) return;
  const { Tracing } = await import("./tracing.ts");
  // Behind the egress proxy as it was at start (telemetry, and so the exporter, waits for a restart anyway).
  const route = proxyFor(gateway.config.server.egressProxy, target.url);
  const agents = route ? otlpProxyAgents(route) : undefined;
  let tracing: Tracing;
  try {
    tracing = new Tracing({ ...target, agent: agents?.agentFor }, telemetry?.service_name ?? process.env.OTEL_SERVICE_NAME ?? "model-gateway", { registry: gateway.metrics.registry, log: gateway.log });
  } catch (err) {
    // The config's endpoint was checked at load; an OTEL_* variable was not: a refusal naming it, not a stack.
    agents?.destroy();
    throw new TracingSetupError(target.from, err);
  }
  o.tracing = tracing;
  // Alongside the store's flush: a collector that does not answer must not hold up the ledger (README, Stopping).
  gateway.closeAlongside(() => tracing.close().finally(() => agents?.destroy()));
  // Info lines are not masked (core/log.ts): the URL is logged without its user and password, the proxy masked.
  gateway.log.info("tracing on: spans exported over OTLP/HTTP", { url: withoutUserinfo(target.url), ...(route ? { egress_proxy: route.shown } : {}) });
}

/** A W3C traceparent's trace id, so access lines join the caller's trace even with tracing off. */
export function traceIdOf(req: IncomingMessage): string | undefined {
  return traceIdOfHeader(req.headers.traceparent);
}

export class Observation {
  constructor(
    private readonly gateway: Gateway, private readonly ctx: GatewayContext, private readonly req: IncomingMessage,
    private readonly res: ServerResponse, private readonly access: boolean,
  ) {}

  /** The request is over (last byte written or the client gone): end its spans, write its access line. */
  finish(outcome: Outcome, ttfbMs: number, durationMs: number): void {
    const { ctx } = this;
    ctx.trace?.finish(ctx, outcome);
    if (!this.access) return;
    const traceId = ctx.trace?.span.spanContext().traceId ?? traceIdOf(this.req);
    // Serialised once, by V8's JSON.stringify (a plain object of a fixed shape), not walked again by pino.
    this.gateway.log.infoJson("request", JSON.stringify(accessRecord(ctx, outcome, { ttfbMs, durationMs, ...wireBytes(this.req, this.res), traceId })));
  }
}

/** Start observing a request; undefined when access logs and tracing are both off. */
export function observe(gateway: Gateway, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, spec: Pick<EndpointSpec, "route" | "action">): Observation | undefined {
  const { tracing } = observabilityOf(gateway);
  const access = accessLogOn(gateway);
  if (tracing) ctx.trace = tracing.startRequest(ctx, req, spec);
  return access || tracing ? new Observation(gateway, ctx, req, res, access) : undefined;
}
