// Per-request observation: the access log line and the trace, started with the request and finished with it.
// Both are decided once per gateway; when both are off, observe() returns undefined and costs one lookup.
import type { IncomingMessage } from "node:http";
import type { Gateway } from "../gateway.ts";
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import { accessRecord } from "./access-log.ts";
import { otlpTarget } from "./otlp-target.ts";
import type { Tracing } from "./tracing.ts";

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
  const tracing = new Tracing(target, telemetry?.service_name ?? process.env.OTEL_SERVICE_NAME ?? "model-gateway");
  o.tracing = tracing;
  gateway.onClose(() => tracing.close());
  gateway.log.info("tracing on: spans exported over OTLP/HTTP", { url: target.url });
}

/** A W3C traceparent's trace id, so access lines join the caller's trace even with tracing off. */
function traceIdOf(req: IncomingMessage): string | undefined {
  const tp = req.headers.traceparent;
  return typeof tp === "string" && /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/.test(tp) ? tp.slice(3, 35) : undefined;
}

/**
 * Wire bytes per request from the connection's counters: what the socket had read and written when its previous
 * request ended (one request at a time on an HTTP/1.1 connection), so headers count, as they do on the wire.
 */
const lastCounts = new WeakMap<object, { read: number; written: number }>();

export class Observation {
  constructor(private readonly gateway: Gateway, private readonly ctx: GatewayContext, private readonly req: IncomingMessage, private readonly access: boolean) {}

  /** The request is over (last byte written or the client gone): end its spans, write its access line. */
  finish(outcome: Outcome, ttfbMs: number, durationMs: number): void {
    const { ctx } = this;
    ctx.trace?.finish(ctx, outcome);
    if (!this.access) return;
    const socket = this.req.socket;
    const read = socket?.bytesRead ?? 0;
    const written = socket?.bytesWritten ?? 0;
    const before = (socket && lastCounts.get(socket)) ?? { read: 0, written: 0 };
    if (socket) lastCounts.set(socket, { read, written });
    const traceId = ctx.trace?.span.spanContext().traceId ?? traceIdOf(this.req);
    // Serialised once, by V8's JSON.stringify (a plain object of a fixed shape), not walked again by pino.
    this.gateway.log.infoJson("request", JSON.stringify(accessRecord(ctx, outcome, {
      ttfbMs,
      durationMs,
      bytesIn: Math.max(0, read - before.read),
      bytesOut: Math.max(0, written - before.written),
      traceId,
    })));
  }
}

/** Start observing a request; undefined when access logs and tracing are both off. */
export function observe(gateway: Gateway, ctx: GatewayContext, req: IncomingMessage): Observation | undefined {
  const { tracing } = observabilityOf(gateway);
  const access = ctx.config.raw.log?.access !== false && gateway.log.enabled("info");
  if (tracing) ctx.trace = tracing.startRequest(ctx, req);
  return access || tracing ? new Observation(gateway, ctx, req, access) : undefined;
}
