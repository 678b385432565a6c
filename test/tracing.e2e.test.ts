// OpenTelemetry traces end to end: a gateway exporting over OTLP/HTTP to a real receiver on loopback, fake OpenAI
// upstreams; the spans of a streamed, a fallen-back and a failed request, the caller's trace continued and the
// attempt's traceparent sent upstream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./helpers/otlp-receiver.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { observabilityOf } from "../core/observability/index.ts";

const KEY = testKey("tracing");
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let otlp: OtlpReceiver;
let gw: TestGateway;

const chat = (extra: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: "test/duo", messages: [{ role: "user", content: "hi" }], ...extra }, { authorization: `Bearer ${KEY}`, ...headers });

/** Every span of one trace, once the gateway has exported them. */
async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  for (let i = 0; i < 50; i++) {
    await observabilityOf(gw.gateway).tracing!.flush();
    const spans = otlp.spans.filter((s) => s.traceId === traceId);
    if (spans.length >= count) return spans;
    await sleep(20);
  }
  throw new Error(`trace ${traceId}: fewer than ${count} spans arrived (${otlp.spans.length} in all)`);
}

const traceparent = (traceId: string, parent = "00f067aa0ba902b7") => `00-${traceId}-${parent}-01`;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  beta = await startFakeOpenAI({ text: "beta answers" });
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream" });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1 },
    telemetry: { service_name: "gw-under-test", otlp: { endpoint: otlp.url, headers: { "x-collector-token": "t0ken" } } },
    providers: { alpha: provider(alpha.baseUrl), beta: provider(beta.baseUrl) },
    models: { "test/duo": { endpoints: [{ provider: "alpha", model: "a-model" }, { provider: "beta", model: "b-model" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
  await otlp?.close();
});

describe("OpenTelemetry traces", () => {
  it("a streamed request: the caller's trace continued, a SERVER span and a CLIENT attempt span with GenAI attributes", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const r = await chat({ stream: true, stream_options: { include_usage: true }, max_tokens: 50, temperature: 0.5 }, { traceparent: traceparent(traceId) });
    expect(r.status).toBe(200);
    const spans = await spansOf(traceId, 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    const client = spans.find((s) => s.kind === CLIENT)!;
    expect(server.parentSpanId).toBe("00f067aa0ba902b7");
    expect(server.service).toBe("gw-under-test");
    expect(server.name).toBe("POST /api/v1/chat/completions");
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "test/duo",
      "gen_ai.response.model": "a-model",
      "gateway.project": "p",
      "gateway.provider": "alpha",
      "gen_ai.response.finish_reasons": ["stop"],
    });
    expect(server.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(server.statusCode).not.toBe(ERROR);

    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.name).toBe("chat a-model");
    expect(client.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "a-model",
      "gen_ai.request.max_tokens": 50,
      "gen_ai.request.temperature": 0.5,
      "gen_ai.response.finish_reasons": ["stop"],
      "gateway.provider": "alpha",
      "gateway.attempt": 1,
      "gateway.fallback_position": 0,
      "http.response.status_code": 200,
    });
    expect(client.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(client.attributes["gen_ai.usage.output_tokens"]).toBe(server.attributes["gen_ai.usage.output_tokens"]);

    // the upstream got the attempt span as its parent, in the caller's trace
    expect(alpha.requests.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${client.spanId}-01`);
    expect(otlp.exports.at(-1)!["x-collector-token"]).toBe("t0ken");
  });

  it("a fallen-back request: two attempt spans, the first failed with error.type, the second served", async () => {
    alpha.failures.push({ kind: "status", status: 500 });
    const traceId = "1af7651916cd43dd8448eb211c80319c";
    const r = await chat({}, { traceparent: traceparent(traceId) });
    expect(r.status).toBe(200);
    const spans = await spansOf(traceId, 3);
    const server = spans.find((s) => s.kind === SERVER)!;
    const attempts = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes["gateway.attempt"]) - Number(b.attributes["gateway.attempt"]));
    expect(attempts).toHaveLength(2);
    expect(attempts.every((a) => a.parentSpanId === server.spanId)).toBe(true);
    expect(attempts[0]!.attributes).toMatchObject({ "gateway.provider": "alpha", "gateway.attempt": 1, "gateway.fallback_position": 0, "error.type": "UPSTREAM_ERROR", "http.response.status_code": 500 });
    expect(attempts[0]!.statusCode).toBe(ERROR);
    expect(attempts[1]!.attributes).toMatchObject({ "gateway.provider": "beta", "gateway.attempt": 2, "gateway.fallback_position": 1, "gen_ai.request.model": "b-model", "gen_ai.response.finish_reasons": ["stop"] });
    expect(attempts[1]!.attributes["error.type"]).toBeUndefined();
    expect(attempts[1]!.statusCode).not.toBe(ERROR);
    expect(server.attributes).toMatchObject({ "http.response.status_code": 200, "gateway.attempts": 2, "gateway.provider": "beta", "gen_ai.response.model": "b-model" });
    expect(server.statusCode).not.toBe(ERROR);
    expect(beta.requests.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${attempts[1]!.spanId}-01`);
  });

  it("a failed request: every attempt span and the server span carry the error", async () => {
    alpha.failures.push({ kind: "status", status: 503 });
    beta.failures.push({ kind: "status", status: 500 });
    const traceId = "2af7651916cd43dd8448eb211c80319c";
    const r = await chat({}, { traceparent: traceparent(traceId) });
    expect(r.status).toBe(502);
    const spans = await spansOf(traceId, 3);
    const server = spans.find((s) => s.kind === SERVER)!;
    const attempts = spans.filter((s) => s.kind === CLIENT);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a.statusCode).toBe(ERROR);
      expect(a.attributes["error.type"]).toBe("UPSTREAM_ERROR");
    }
    expect(server.statusCode).toBe(ERROR);
    expect(server.attributes).toMatchObject({ "http.response.status_code": 502, "error.type": "UPSTREAM_ERROR", "gateway.attempts": 2 });
  });

  it("an all-zero traceparent is ignored: a new trace starts, and the upstream gets its id, not the zeros", async () => {
    alpha.requests.length = 0;
    const r = await chat({}, { traceparent: traceparent("0".repeat(32)) });
    expect(r.status).toBe(200);
    const sent = String(alpha.requests.at(-1)!.headers.traceparent);
    expect(sent).toMatch(/^00-[\da-f]{32}-[\da-f]{16}-01$/);
    expect(sent.slice(3, 35)).not.toBe("0".repeat(32));
    const spans = await spansOf(sent.slice(3, 35), 2);
    expect(spans.find((s) => s.kind === SERVER)!.parentSpanId).toBeUndefined();
  });

  it("without a traceparent a new trace starts, and the upstream still gets one", async () => {
    alpha.requests.length = 0;
    const r = await chat({});
    expect(r.status).toBe(200);
    const sent = String(alpha.requests.at(-1)!.headers.traceparent);
    expect(sent).toMatch(/^00-[\da-f]{32}-[\da-f]{16}-01$/);
    const spans = await spansOf(sent.slice(3, 35), 2);
    expect(spans.find((s) => s.kind === SERVER)!.parentSpanId).toBeUndefined();
  });
});
