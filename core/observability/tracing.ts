// OpenTelemetry traces: a SERVER span per request and a CLIENT span per upstream attempt, named and attributed per
// the GenAI semantic conventions, exported over OTLP/HTTP (JSON). The caller's W3C traceparent is continued and the
// attempt's own is sent upstream. Off unless configured, and then not even loaded: index.ts imports this module (and
// with it the OpenTelemetry packages) only for a gateway that exports traces; callers test `ctx.trace` first.
import type { IncomingMessage } from "node:http";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { GatewayContext, GatewayResponse, Outcome } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import type { Target } from "../contracts/provider.ts";
import type { SseEvent } from "../sse/parse.ts";
import { setTraceInjector } from "./trace-headers.ts";
import { statedOutputLimit } from "../metering/output-limit.ts";

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

export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private closed = false;

  constructor(target: { url: string; headers: Record<string, string> }, serviceName: string) {
    const exporter = new OTLPTraceExporter({ url: target.url, headers: target.headers });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    this.tracer = this.provider.getTracer("model-gateway");
    if (liveTracers++ === 0) setTraceInjector(injectTraceHeaders);
  }

  /** The request's SERVER span, child of the caller's traceparent when there is one. */
  startRequest(ctx: GatewayContext, req: IncomingMessage): RequestTrace {
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const route = ctx.path.split("?")[0]!;
    const span = this.tracer.startSpan(`${ctx.method} ${route}`, {
      kind: SpanKind.SERVER,
      startTime: Date.now(),
      attributes: {
        "http.request.method": ctx.method,
        "http.route": route,
        "url.path": route,
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (--liveTracers === 0) setTraceInjector(undefined);
    await this.provider.shutdown().catch(() => {});
  }
}

/** GenAI operation names (gen_ai.operation.name) for the gateway's endpoints. */
const GEN_AI_OPERATION: Partial<Record<string, string>> = {
  chat: "chat", messages: "chat", responses: "chat", gemini: "chat", count_tokens: "count_tokens", embeddings: "embeddings", rerank: "rerank",
  images: "generate_content", videos: "generate_content",
};

/** gen_ai.provider.name's well-known values, by the provider's wire protocol. */
const GEN_AI_PROVIDER: Record<string, string> = {
  openai: "openai", anthropic: "anthropic", gemini: "gcp.gemini", cohere: "cohere", bedrock: "aws.bedrock", vertex: "gcp.vertex_ai",
};

export class RequestTrace {
  private readonly attempts: AttemptTrace[] = [];
  constructor(private readonly tracer: Tracer, readonly span: Span) {}

  /** A CLIENT span for one upstream attempt; `position` is the target's place in the fallback order. */
  attempt(ctx: GatewayContext, target: Target, position: number): AttemptTrace {
    const protocol = ctx.config.providers.get(target.provider)?.protocol ?? target.provider;
    const op = GEN_AI_OPERATION[ctx.endpoint] ?? ctx.endpoint;
    const span = this.tracer.startSpan(`${op} ${target.upstreamModel}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        "gen_ai.operation.name": op,
        "gen_ai.provider.name": GEN_AI_PROVIDER[protocol] ?? protocol,
        "gen_ai.request.model": target.upstreamModel,
        "gateway.provider": target.provider,
        "gateway.model": target.modelId,
        "gateway.attempt": ctx.attempts.length + 1,
        "gateway.fallback_position": position,
        ...requestParams(ctx.body),
      },
    }, trace.setSpan(ROOT_CONTEXT, this.span));
    const a = new AttemptTrace(span);
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

  /** The request is over: close open attempt spans (a stream's) and the server span with the outcome. */
  finish(ctx: GatewayContext, outcome: Outcome): void {
    const usage = usageAttributes(ctx);
    for (const a of this.attempts) a.end(usage, outcome.streamError ?? (outcome.aborted ? "client_aborted" : undefined));
    const s = this.span;
    const attrs: Attributes = { "http.response.status_code": outcome.status, "gateway.attempts": ctx.attempts.length, ...usage };
    if (ctx.model) attrs["gen_ai.request.model"] = ctx.body?.model ?? ctx.model.id;
    if (ctx.resolvedTarget) attrs["gen_ai.response.model"] = ctx.resolvedTarget.upstreamModel;
    if (ctx.resolvedProvider) attrs["gateway.provider"] = ctx.resolvedProvider;
    if (ctx.auth) {
      attrs["gateway.project"] = ctx.auth.projectId;
      attrs["gateway.key_id"] = ctx.auth.keyId;
    }
    const reasons = this.attempts.find((a) => a.finishReasons.length)?.finishReasons;
    if (reasons) attrs["gen_ai.response.finish_reasons"] = reasons;
    if (outcome.aborted) attrs["gateway.client_aborted"] = true;
    const err = outcome.error ?? outcome.streamError;
    if (err || outcome.status >= 500) {
      attrs["error.type"] = err?.code ?? String(outcome.status);
      s.setStatus({ code: SpanStatusCode.ERROR, message: err?.message });
    }
    s.setAttributes(attrs);
    s.end();
  }
}

export class AttemptTrace {
  finishReasons: string[] = [];
  private ended = false;
  constructor(readonly span: Span) {}

  /** Give the call its own signal (following the request's), so the upstream client finds this span and sends it. */
  bind(call: { signal: AbortSignal }): void {
    const signal = AbortSignal.any([call.signal]);
    spanBySignal.set(signal, this.span);
    call.signal = signal;
  }

  failed(err: GatewayError): void {
    if (this.ended) return;
    this.ended = true;
    const upstream = err.details?.upstream_status;
    this.span.setAttributes({ "error.type": err.code, ...(typeof upstream === "number" ? { "http.response.status_code": upstream } : {}) });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    this.span.end();
  }

  /** The attempt served the request: a JSON answer ends the span now; a stream's ends with the request. */
  succeeded(ctx: GatewayContext, response: GatewayResponse): GatewayResponse {
    this.span.setAttribute("http.response.status_code", response.status);
    if (response.kind === "json") {
      this.finishReasons = finishReasonsOf(response.body);
      const model = (response.body as { model?: unknown } | undefined)?.model;
      if (typeof model === "string") this.span.setAttribute("gen_ai.response.model", model);
      this.end(usageAttributes(ctx));
      return response;
    }
    if (response.kind === "stream") return { ...response, events: this.watch(response.events) };
    this.end(usageAttributes(ctx));
    return response;
  }

  end(usage: Attributes, error?: GatewayError | string): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttributes(usage);
    if (this.finishReasons.length) this.span.setAttribute("gen_ai.response.finish_reasons", this.finishReasons);
    if (error) {
      this.span.setAttribute("error.type", typeof error === "string" ? error : error.code);
      if (typeof error !== "string") this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    this.span.end();
  }

  /**
   * Collect finish reasons as the stream passes (both protocols). A plain iterator, not an async generator: one
   * promise hop per event on the streaming path.
   */
  private watch(events: AsyncIterable<SseEvent>): AsyncIterable<SseEvent> {
    const reasons = this.finishReasons;
    const scan = (step: IteratorResult<SseEvent>) => {
      const d = step.done ? undefined : step.value.data;
      if (d !== undefined && d.includes('_reason":"')) {
        for (const m of d.matchAll(/"(?:finish|stop)_reason":"([^"]+)"/g)) if (!reasons.includes(m[1]!)) reasons.push(m[1]!);
      }
      return step;
    };
    return {
      [Symbol.asyncIterator]() {
        const it = events[Symbol.asyncIterator]();
        return {
          next: () => it.next().then(scan),
          return: (value?: unknown) => (it.return ? it.return(value) : Promise.resolve({ done: true as const, value: undefined })),
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

function requestParams(body: any): Attributes {
  if (!body || typeof body !== "object") return {};
  const a: Attributes = {};
  // The limit the upstream is asked for, whichever alias carries it (core/metering/output-limit.ts).
  const max = statedOutputLimit(body);
  if (max !== undefined) a["gen_ai.request.max_tokens"] = max;
  if (typeof body.temperature === "number") a["gen_ai.request.temperature"] = body.temperature;
  if (typeof body.top_p === "number") a["gen_ai.request.top_p"] = body.top_p;
  if (body.stream === true) a["gateway.stream"] = true;
  return a;
}

function usageAttributes(ctx: GatewayContext): Attributes {
  const u = ctx.usage;
  if (!u) return {};
  const a: Attributes = {
    "gen_ai.usage.input_tokens": (u.inputTokens || 0) + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0),
    "gen_ai.usage.output_tokens": u.outputTokens || 0,
  };
  if (u.cacheReadTokens) a["gen_ai.usage.cache_read.input_tokens"] = u.cacheReadTokens;
  if (u.cacheWriteTokens) a["gen_ai.usage.cache_creation.input_tokens"] = u.cacheWriteTokens;
  return a;
}

function finishReasonsOf(body: any): string[] {
  if (!body || typeof body !== "object") return [];
  if (typeof body.stop_reason === "string") return [body.stop_reason];
  const out: string[] = [];
  for (const c of Array.isArray(body.choices) ? body.choices : []) if (typeof c?.finish_reason === "string" && !out.includes(c.finish_reason)) out.push(c.finish_reason);
  return out;
}
