// OpenTelemetry traces: a SERVER span per request and a CLIENT span per upstream attempt, named and attributed per
// the GenAI semantic conventions, exported over OTLP/HTTP (JSON). The caller's W3C traceparent is continued and the
// attempt's own is sent upstream. Off unless configured, and then not even loaded: index.ts imports this module (and
// with it the OpenTelemetry packages) only for a gateway that exports traces; callers test `ctx.trace` first.
import type { Agent, IncomingMessage } from "node:http";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { Registry } from "prom-client";
import type { GatewayContext, GatewayResponse, Outcome } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import type { EndpointSpec } from "../endpoints/spec.ts";
import type { Logger } from "../log.ts";
import type { SseEvent } from "../sse/parse.ts";
import { setTraceInjector } from "./trace-headers.ts";
import { billed } from "./access-log.ts";
import { CountingExporter, logDiagnostics, rateLimitedDiag, spanCounter, stopDiagnostics } from "./export-health.ts";
import { GEN_AI_OPERATION, finishReasonsOf, genAiProviderName, mayEnd, requestParams, scanFinishReasons, serverAttributes, usageAttributes, usageLeft } from "./gen-ai-attributes.ts";
import { routeTemplate } from "./route-template.ts";
import { settleWithin } from "../deadline.ts";

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    /** The request's trace (only when tracing is on). */
    trace?: RequestTrace;
  }
}

const propagator = new W3CTraceContextPropagator();
/**
 * The attempt span of an upstream call, keyed by the call's own AbortSignal (what every driver hands the upstream
 * client). Not AsyncLocalStorage: on Node 20 an active ALS slows every promise in the process.
 */
const spanBySignal = new WeakMap<AbortSignal, Span>();
/** How many tracers are alive in this process: while there are none, the upstream client has no injector to call. */
let liveTracers = 0;

/**
 * How long the spans not yet exported may take to reach the collector at shutdown: the exporter's own timeout is
 * 10 s, which a collector that accepts and never answers used up in full, past the README's shutdown budget.
 */
export const CLOSE_FLUSH_MS = 2000;

export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly exporter: CountingExporter;
  private readonly log: Logger;
  private closed = false;

  /** `target.agent`: the node Agent for a protocol, when exports go through the egress proxy (otlp-proxy.ts). */
  constructor(target: { url: string; headers: Record<string, string>; agent?: (protocol: string) => Agent }, serviceName: string, o: { registry: Registry; log: Logger }) {
    // Spans the collector refused are counted (gateway_trace_spans_total) and its errors logged (export-health.ts).
    const diagnostics = rateLimitedDiag(o.log);
    const otlp = new OTLPTraceExporter({ url: target.url, headers: target.headers, ...(target.agent ? { httpAgentOptions: target.agent } : {}) });
    const exporter = (this.exporter = new CountingExporter(otlp, spanCounter(o.registry), diagnostics.warn));
    this.log = o.log;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    this.tracer = this.provider.getTracer("model-gateway");
    logDiagnostics(diagnostics);
    if (liveTracers++ === 0) setTraceInjector(injectTraceHeaders);
  }

  /**
   * The request's SERVER span, child of the caller's traceparent when there is one. Named by the route template,
   * never the path (ids, model names: a series per request in a trace backend).
   */
  startRequest(ctx: GatewayContext, req: IncomingMessage, spec: Pick<EndpointSpec, "route" | "action">): RequestTrace {
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const route = routeTemplate(spec);
    const span = this.tracer.startSpan(`${ctx.method} ${route}`, {
      kind: SpanKind.SERVER,
      startTime: Date.now(),
      attributes: {
        "http.request.method": ctx.method,
        "http.route": route,
        "url.path": ctx.path.split("?")[0]!,
        "gateway.request_id": ctx.requestId,
        "gateway.generation_id": ctx.generationId,
        "gateway.endpoint": ctx.endpoint,
        ...(GEN_AI_OPERATION[ctx.endpoint] ? { "gen_ai.operation.name": GEN_AI_OPERATION[ctx.endpoint] } : {}),
      },
    }, parent);
    return new RequestTrace(this.tracer, span);
  }

  /** Export what is buffered (tests, shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /**
   * Export what is left, within `budgetMs`: past it the spans still on their way are dropped, said at warn (not
   * rate-limited: the last word on them) and counted as failed.
   */
  async close(budgetMs = CLOSE_FLUSH_MS): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (--liveTracers === 0) {
      setTraceInjector(undefined);
      stopDiagnostics();
    }
    const flushed = await settleWithin(this.provider.shutdown().then(() => true, () => true), budgetMs, () => false);
    if (flushed) return;
    const dropped = this.exporter.abandon();
    if (dropped) this.log.warn(`tracing: ${dropped} spans dropped at shutdown: the collector did not take them within ${budgetMs} ms`);
  }
}

export class RequestTrace {
  private readonly attempts: AttemptTrace[] = [];
  constructor(private readonly tracer: Tracer, readonly span: Span) {}

  /** A CLIENT span for one upstream attempt; `position` is the target's place in the fallback order. */
  attempt(ctx: GatewayContext, target: Target, position: number): AttemptTrace {
    const config = ctx.config.providers.get(target.provider);
    const protocol = config?.protocol ?? target.provider;
    const op = GEN_AI_OPERATION[ctx.endpoint] ?? ctx.endpoint;
    const span = this.tracer.startSpan(`${op} ${target.upstreamModel}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        "gen_ai.operation.name": op,
        // The host's own value (Groq, Mistral, Azure OpenAI, ...) when the driver knows it, else its protocol's.
        "gen_ai.provider.name": genAiProviderName(ctx.drivers.get(target.provider)?.genAiProvider, protocol),
        "gen_ai.request.model": target.upstreamModel,
        ...serverAttributes(target.credentials?.baseUrl ?? config?.base_url),
        "gateway.provider": target.provider,
        "gateway.model": target.modelId,
        "gateway.attempt": ctx.attempts.length + 1,
        "gateway.fallback_position": position,
        ...requestParams(ctx.body),
      },
    }, trace.setSpan(ROOT_CONTEXT, this.span));
    const a = new AttemptTrace(span, ctx);
    this.attempts.push(a);
    return a;
  }

  /**
   * An INTERNAL span for one MCP tool call, per the GenAI `execute_tool` conventions; the caller ends it with
   * `end(error?)`, error being the error.type to record.
   */
  toolCall(tool: string, attributes: Attributes): { end(error?: string, attrs?: Attributes): void } {
    const span = this.tracer.startSpan(`execute_tool ${tool}`, {
      kind: SpanKind.INTERNAL,
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.type": "extension", ...attributes },
    }, trace.setSpan(ROOT_CONTEXT, this.span));
    return {
      end(error, attrs) {
        if (attrs) span.setAttributes(attrs);
        if (error) {
          span.setAttribute("error.type", error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        }
        span.end();
      },
    };
  }

  /**
   * The request is over: end the attempts still open and the server span with the outcome. The usage on both is
   * what the ledger bills (estimated for a stream cut short, flagged so); an open attempt gets what the attempts
   * that reported their own usage leave of it, so the CLIENT spans add up to the bill.
   */
  finish(ctx: GatewayContext, outcome: Outcome): void {
    const bill = ctx.attempts.length ? billed(ctx, outcome) : ctx.usage ? { usage: ctx.usage, estimated: false } : undefined;
    const open = this.attempts.filter((a) => a.open);
    for (const a of open) if (!a.cut && a.ownUsage) a.end(a.ownUsage);
    const rest = open.filter((a) => a.open);
    if (rest.length) {
      const left = bill && usageLeft(bill.usage, this.attempts.flatMap((a) => (a.usage ? [a.usage] : [])));
      const cut = outcome.streamError ?? (outcome.aborted ? "client_aborted" : undefined);
      rest.forEach((a, i) => a.end(i === rest.length - 1 ? left : a.ownUsage, a.cut ?? (a.stream ? cut : undefined), bill?.estimated));
    }
    const s = this.span;
    const attrs: Attributes = { "http.response.status_code": outcome.status, "gateway.attempts": ctx.attempts.length, ...usageAttributes(bill?.usage, bill?.estimated) };
    if (ctx.model) attrs["gen_ai.request.model"] = ctx.body?.model ?? ctx.model.id;
    // The model that generated the answer: the upstream's own id, as it named it (ctx.upstreamModel), not the gateway's.
    const responseModel = ctx.upstreamModel ?? ctx.resolvedTarget?.upstreamModel;
    if (responseModel) attrs["gen_ai.response.model"] = responseModel;
    if (ctx.resolvedProvider) attrs["gateway.provider"] = ctx.resolvedProvider;
    if (ctx.auth) {
      attrs["gateway.project"] = ctx.auth.projectId;
      attrs["gateway.key_id"] = ctx.auth.keyId;
    }
    const reasons = this.attempts.findLast((a) => a.finishReasons.length)?.finishReasons;
    if (reasons) attrs["gen_ai.response.finish_reasons"] = reasons;
    if (outcome.aborted) attrs["gateway.client_aborted"] = true;
    const err = outcome.error ?? outcome.streamError;
    if (err || outcome.status >= 500) attrs["error.type"] = err?.code ?? String(outcome.status);
    // HTTP semconv: a SERVER span is an error for a 5xx (or a stream the upstream broke), not for the client's 4xx.
    if (outcome.status >= 500 || (outcome.streamError && outcome.streamError.status >= 500)) s.setStatus({ code: SpanStatusCode.ERROR, message: err?.message });
    s.setAttributes(attrs);
    s.end();
  }
}

/** What the attempt knows of itself (dispatch's AttemptCall): the usage its upstream reported. */
export interface AttemptSelf {
  readonly usage?: Usage;
}

export class AttemptTrace {
  finishReasons: string[] = [];
  /** The usage the span was ended with. */
  usage: Usage | undefined;
  /** A stream cut before its end: by the upstream (its error) or the reader (client_aborted). */
  cut: GatewayError | string | undefined;
  stream = false;
  private ended = false;
  /** When the attempt was over, for a span ended later (its usage known only with the request's bill). */
  private overAt: number | undefined;
  private self: AttemptSelf | undefined;
  constructor(readonly span: Span, private readonly ctx: GatewayContext) {}

  get open(): boolean {
    return !this.ended;
  }

  get ownUsage(): Usage | undefined {
    return this.self?.usage;
  }

  /** Give the call its own signal (following the request's), so the upstream client finds this span and sends it. */
  bind(call: { signal: AbortSignal }): void {
    const signal = AbortSignal.any([call.signal]);
    spanBySignal.set(signal, this.span);
    call.signal = signal;
  }

  failed(err: GatewayError): void {
    if (this.ended) return;
    this.ended = true;
    // The client left before the answer began: nothing failed upstream (as for a stream it cuts later).
    if (this.ctx.signal.aborted) {
      this.span.setAttribute("error.type", "client_aborted");
      this.span.end();
      return;
    }
    const upstream = err.details?.upstream_status;
    this.span.setAttributes({ "error.type": err.code, ...(typeof upstream === "number" ? { "http.response.status_code": upstream } : {}) });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    this.span.end();
  }

  /**
   * The attempt served the request. A JSON answer whose usage the upstream reported ends the span now; one without
   * (embeddings, images: the endpoint counts it after) ends with the request, timed as of now. A stream's ends
   * when its events do, with its own usage: each model turn of an MCP loop has its own.
   */
  succeeded(ctx: GatewayContext, response: GatewayResponse, self: AttemptSelf): GatewayResponse {
    this.self = self;
    this.span.setAttribute("http.response.status_code", response.status);
    if (ctx.upstreamModel) this.span.setAttribute("gen_ai.response.model", ctx.upstreamModel);
    if (response.kind === "stream") {
      this.stream = true;
      return { ...response, events: this.watch(response.events) };
    }
    if (response.kind === "json") this.finishReasons = finishReasonsOf(response.body);
    this.over();
    return response;
  }

  /** The attempt is over: its span ends now when its usage is known, else with the request (finish). */
  private over(cut?: GatewayError | string): void {
    if (this.ended || this.overAt !== undefined) return;
    this.overAt = Date.now();
    this.cut = cut;
    if (!cut && this.self?.usage) this.end(this.self.usage);
  }

  end(usage: Usage | undefined, error?: GatewayError | string, estimated = false): void {
    if (this.ended) return;
    this.ended = true;
    this.usage = usage;
    this.span.setAttributes(usageAttributes(usage, estimated && usage !== undefined));
    if (this.finishReasons.length) this.span.setAttribute("gen_ai.response.finish_reasons", this.finishReasons);
    if (error) {
      this.span.setAttribute("error.type", typeof error === "string" ? error : error.code);
      if (typeof error !== "string") this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    this.span.end(this.overAt);
  }

  /**
   * Collect finish reasons as the stream passes (every client protocol) and end the span with the stream. A plain
   * iterator, not an async generator: one promise hop per event on the streaming path, and no usage read per event.
   */
  private watch(events: AsyncIterable<SseEvent>): AsyncIterable<SseEvent> {
    const reasons = this.finishReasons;
    const scan = (step: IteratorResult<SseEvent>) => {
      if (step.done) this.over();
      else if (mayEnd(step.value.data, step.value.event)) scanFinishReasons(step.value.data, step.value.event, reasons);
      return step;
    };
    const broke = (e: unknown) => {
      // Cut by the request's own abort (the client left): no failure of the upstream's.
      this.over(this.ctx.signal.aborted ? "client_aborted" : typeof e === "object" && e !== null && "code" in e ? (e as GatewayError) : "stream_error");
      throw e;
    };
    return {
      [Symbol.asyncIterator]: () => {
        const it = events[Symbol.asyncIterator]();
        return {
          next: () => it.next().then(scan, broke),
          return: (value?: unknown) => {
            // The reader stopped: the client left (cut), or it had what it needed (an MCP loop's turn, a guardrail).
            this.over(this.ctx.signal.aborted ? "client_aborted" : undefined);
            return it.return ? it.return(value) : Promise.resolve({ done: true as const, value: undefined });
          },
        };
      },
    };
  }
}

/** The running attempt's traceparent added to an upstream request's headers (trace-headers.ts calls it). */
function injectTraceHeaders(headers: Record<string, string>, signal: AbortSignal): Record<string, string> {
  const span = spanBySignal.get(signal);
  if (!span) return headers;
  const out = { ...headers };
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), out, defaultTextMapSetter);
  return out;
}
