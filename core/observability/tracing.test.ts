// The spans of one request as a trace backend gets them: each attempt's own usage, what a cut stream was billed,
// finish reasons of every protocol, and a client's 4xx that is no error of the server.
import { describe, expect, it } from "vitest";
import { InMemorySpanExporter, BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { RequestTrace } from "./tracing.ts";
import type { GatewayContext, GatewayResponse, Outcome } from "../pipeline/context.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import type { SseEvent } from "../sse/parse.ts";
import { GatewayError } from "../errors.ts";

const target: Target = { modelId: "t/m", provider: "p", upstreamModel: "m-up", pricing: {} as Target["pricing"] };

function setup(meter?: { usage: Usage; estimated: boolean }) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("t");
  const ctx = {
    endpoint: "responses", body: {}, attempts: [{ provider: "p" }], targets: [target], signal: new AbortController().signal,
    config: { providers: new Map([["p", { protocol: "openai", base_url: "https://llm.example.com:8443/v1" }]]) },
    drivers: new Map(), ...(meter ? { meter: { finalUsage: () => meter } } : {}),
  } as unknown as GatewayContext;
  const trace = new RequestTrace(tracer, tracer.startSpan("POST /api/v1/responses", { kind: SpanKind.SERVER }));
  const spans = () => exporter.getFinishedSpans();
  const client = () => spans().filter((s) => s.kind === SpanKind.CLIENT);
  const server = () => spans().find((s) => s.kind === SpanKind.SERVER)!;
  return { ctx, trace, spans, client, server };
}

function stream(events: SseEvent[], failAt?: number): GatewayResponse {
  let i = 0;
  return {
    kind: "stream", status: 200,
    events: {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          if (i === failAt) throw new GatewayError(502, "UPSTREAM_ERROR", "upstream closed the stream");
          return i < events.length ? { done: false, value: events[i++]! } : { done: true, value: undefined };
        },
      }),
    },
  };
}

async function drain(r: GatewayResponse): Promise<void> {
  if (r.kind !== "stream") return;
  for await (const _ of r.events);
}

const ok: Outcome = { status: 200, aborted: false };
const usageOf = (s: ReadableSpan) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]];

describe("RequestTrace", () => {
  it("each streamed turn of an MCP loop ends with its own usage when its events end, not the request's total at its end", async () => {
    const { ctx, trace, client, server } = setup({ usage: { inputTokens: 28, outputTokens: 12, cacheReadTokens: 3 }, estimated: false });
    const turn1 = { usage: { inputTokens: 20, outputTokens: 5 } };
    const a1 = trace.attempt(ctx, target, 0);
    const r1 = a1.succeeded(ctx, stream([{ data: '{"type":"response.completed","response":{"status":"completed"}}' }]), turn1);
    await drain(r1);
    // The first turn is over and exported before the second starts.
    expect(client()).toHaveLength(1);
    expect(usageOf(client()[0]!)).toEqual([20, 5]);
    const a2 = trace.attempt(ctx, target, 0);
    await drain(a2.succeeded(ctx, stream([{ data: "{}" }]), { usage: { inputTokens: 8, outputTokens: 7, cacheReadTokens: 3 } }));
    trace.finish(ctx, ok);
    expect(client().map(usageOf)).toEqual([[20, 5], [11, 7]]);
    expect(client()[1]!.attributes["gen_ai.usage.cache_read.input_tokens"]).toBe(3);
    // The server span carries the bill: the sum of the turns.
    expect(usageOf(server())).toEqual([31, 12]);
    expect(client()[0]!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
  });

  it("a stream the upstream broke carries the usage the ledger bills for it, marked estimated, and the error", async () => {
    const { ctx, trace, client, server } = setup({ usage: { inputTokens: 28, outputTokens: 19 }, estimated: true });
    const a = trace.attempt(ctx, target, 0);
    await expect(drain(a.succeeded(ctx, stream([{ data: "{}" }, { data: "{}" }], 1), {}))).rejects.toThrow("upstream closed");
    const err = new GatewayError(502, "UPSTREAM_ERROR", "upstream closed the stream");
    trace.finish(ctx, { status: 200, aborted: false, streamError: err });
    const c = client()[0]!;
    expect(usageOf(c)).toEqual([28, 19]);
    expect(c.attributes["gateway.usage.estimated"]).toBe(true);
    expect(c.attributes["error.type"]).toBe("UPSTREAM_ERROR");
    expect(c.status.code).toBe(SpanStatusCode.ERROR);
    expect(usageOf(server())).toEqual([28, 19]);
    expect(server().attributes["gateway.usage.estimated"]).toBe(true);
  });

  it("a stream the client left carries the estimate billed for it", async () => {
    const { ctx, trace, client } = setup({ usage: { inputTokens: 27, outputTokens: 4 }, estimated: true });
    const a = trace.attempt(ctx, target, 0);
    const r = a.succeeded(ctx, stream([{ data: "{}" }, { data: "{}" }]), {});
    const it = (r as { events: AsyncIterable<SseEvent> }).events[Symbol.asyncIterator]();
    await it.next();
    await it.return!();
    trace.finish(ctx, { status: 200, aborted: true });
    expect(usageOf(client()[0]!)).toEqual([27, 4]);
    expect(client()[0]!.attributes["gateway.usage.estimated"]).toBe(true);
  });

  it("an attempt the client left before its answer began is client_aborted, not an upstream error", () => {
    const { ctx, trace, client } = setup();
    const controller = new AbortController();
    (ctx as { signal: AbortSignal }).signal = controller.signal;
    const a = trace.attempt(ctx, target, 0);
    controller.abort();
    a.failed(new GatewayError(499, "CANCELLED", "the client closed the connection"));
    expect(client()[0]!.attributes["error.type"]).toBe("client_aborted");
    expect(client()[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a JSON answer whose usage the endpoint counts after (embeddings) gets it on its span", async () => {
    const { ctx, trace, client } = setup();
    (ctx as { endpoint: string }).endpoint = "embeddings";
    const a = trace.attempt(ctx, target, 0);
    a.succeeded(ctx, { kind: "json", status: 200, body: { data: [] } }, {});
    (ctx as { usage?: Usage }).usage = { inputTokens: 9, outputTokens: 0 };
    trace.finish(ctx, ok);
    expect(usageOf(client()[0]!)).toEqual([9, 0]);
    expect(client()[0]!.attributes["gateway.usage.estimated"]).toBeUndefined();
  });

  it("finish reasons of Gemini answers and Responses statuses", async () => {
    const { ctx, trace, client } = setup();
    (ctx as { endpoint: string }).endpoint = "gemini";
    const a = trace.attempt(ctx, target, 0);
    a.succeeded(ctx, { kind: "json", status: 200, body: { candidates: [{ finishReason: "MAX_TOKENS" }] } }, { usage: { inputTokens: 1, outputTokens: 1 } });
    const b = trace.attempt(ctx, target, 0);
    await drain(b.succeeded(ctx, stream([{ data: '{"candidates":[{"content":{}}]}' }, { data: '{"candidates":[{"finishReason":"STOP"}],"modelVersion":"t/m"}' }]), { usage: { inputTokens: 1, outputTokens: 1 } }));
    const c = trace.attempt(ctx, target, 0);
    c.succeeded(ctx, { kind: "json", status: 200, body: { object: "response", status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } }, { usage: { inputTokens: 1, outputTokens: 1 } });
    expect(client().map((s) => s.attributes["gen_ai.response.finish_reasons"])).toEqual([["MAX_TOKENS"], ["STOP"], ["max_output_tokens"]]);
  });

  it("the upstream's own model and its address are on the CLIENT span, a stream's too", async () => {
    const { ctx, trace, client, server } = setup();
    (ctx as { upstreamModel?: string }).upstreamModel = "m-up-2024-01-01";
    const a = trace.attempt(ctx, target, 0);
    await drain(a.succeeded(ctx, stream([{ data: "{}" }]), { usage: { inputTokens: 1, outputTokens: 1 } }));
    trace.finish(ctx, ok);
    expect(client()[0]!.attributes).toMatchObject({ "gen_ai.response.model": "m-up-2024-01-01", "server.address": "llm.example.com", "server.port": 8443 });
    expect(server().attributes["gen_ai.response.model"]).toBe("m-up-2024-01-01");
  });

  it("a client's 4xx leaves the SERVER span's status unset (error.type still says why); a 5xx is an error", () => {
    const a = setup();
    a.trace.finish(a.ctx, { status: 404, aborted: false, error: new GatewayError(404, "NOT_FOUND", "no such response") });
    expect(a.server().status.code).toBe(SpanStatusCode.UNSET);
    expect(a.server().attributes["error.type"]).toBe("NOT_FOUND");
    const b = setup();
    b.trace.finish(b.ctx, { status: 502, aborted: false, error: new GatewayError(502, "UPSTREAM_ERROR", "down") });
    expect(b.server().status.code).toBe(SpanStatusCode.ERROR);
  });
});
