// Traces as a trace backend and an operator see them: the collector's password never in the log, the model that
// answered and where it was called, the usage a cut stream was billed, route templates instead of ids, a client's
// 404 that is no server error, Gemini's finish reasons, and a collector that refuses spans noticed in the log and
// on /metrics.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./helpers/otlp-receiver.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { observabilityOf } from "../core/observability/index.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("tracing-semconv");
const PASSWORD = "S3cretPassw0rdForOtlp";
const SERVER = 2;
const CLIENT = 3;
const UNSET = 0;
const ERROR = 2;

let upstream: FakeOpenAI;
let otlp: OtlpReceiver;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

const auth = { authorization: `Bearer ${KEY}` };
const chat = (extra: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postJson(`${baseURL}/chat/completions`, { model: "test/m", messages: [{ role: "user", content: "hi" }], ...extra }, { ...auth, ...headers });

async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  for (let i = 0; i < 100; i++) {
    await observabilityOf(gw.gateway).tracing!.flush();
    const spans = otlp.spans.filter((s) => s.traceId === traceId);
    if (spans.length >= count) return spans;
    await sleep(20);
  }
  throw new Error(`trace ${traceId}: fewer than ${count} spans arrived`);
}

const tp = (n: number) => `00-${n.toString(16).padStart(32, "a")}-00f067aa0ba902b7-01`;
const idOf = (n: number) => n.toString(16).padStart(32, "a");

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  upstream = await startFakeOpenAI({ text: "one two three four five six seven eight" });
  // The upstream names a dated snapshot of the model asked for, as OpenAI does.
  upstream.hook = (req) => {
    if (req.body?.model === "m-up") req.body.model = "m-up-2024-08-06";
    return false;
  };
  const started = await startLoggedGateway({
    store: { kind: "memory" },
    telemetry: { service_name: "semconv", otlp: { endpoint: otlp.url.replace("//", `//otel:${PASSWORD}@`) } },
    providers: { up: { protocol: "openai", base_url: upstream.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m-up", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, {}, "info");
  gw = started.gw;
  log = started.log;
  baseURL = started.baseURL;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await otlp?.close();
});

describe("traces per the semantic conventions", () => {
  it("the collector URL is logged without its password, and the password appears in no line", () => {
    const on = log.records().find((r) => r.msg?.startsWith("tracing on"));
    expect(on?.url).toBe(`${otlp.url}/v1/traces`);
    expect(log.lines.join("\n")).not.toContain(PASSWORD);
  });

  it("response.model is the model the upstream says answered, on both spans, and the CLIENT span says where it called", async () => {
    const r = await chat({}, { traceparent: tp(1) });
    expect(r.status).toBe(200);
    const spans = await spansOf(idOf(1), 2);
    const client = spans.find((s) => s.kind === CLIENT)!;
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(client.attributes).toMatchObject({ "gen_ai.request.model": "m-up", "gen_ai.response.model": "m-up-2024-08-06", "server.address": "127.0.0.1", "server.port": upstream.port });
    expect(server.attributes["gen_ai.response.model"]).toBe("m-up-2024-08-06");
  });

  it("a streamed answer's CLIENT span names the model too", async () => {
    const r = await chat({ stream: true, stream_options: { include_usage: true } }, { traceparent: tp(2) });
    expect(r.status).toBe(200);
    const client = (await spansOf(idOf(2), 2)).find((s) => s.kind === CLIENT)!;
    expect(client.attributes["gen_ai.response.model"]).toBe("m-up-2024-08-06");
    expect(client.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
  });

  it("a stream the upstream broke carries the tokens the ledger billed, marked estimated", async () => {
    upstream.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const r = await chat({ stream: true, stream_options: { include_usage: true } }, { traceparent: tp(3), "x-request-id": "semconv-cut" });
    expect(r.status).toBe(200);
    const [line] = await log.accessOnce((l) => l.requestId === "semconv-cut", 1);
    expect(line!.outcome).toBe("stream_error");
    const spans = await spansOf(idOf(3), 2);
    for (const s of spans) {
      expect(s.attributes["gen_ai.usage.input_tokens"]).toBe(line!.inputTokens);
      expect(s.attributes["gen_ai.usage.output_tokens"]).toBe(line!.outputTokens);
      expect(s.attributes["gateway.usage.estimated"]).toBe(true);
    }
    expect(spans.find((s) => s.kind === CLIENT)!.statusCode).toBe(ERROR);
  });

  it("a path with an id is named by its route template, and its 404 leaves the SERVER span's status unset", async () => {
    const res = await fetch(`${baseURL}/responses/resp_0123456789abcdef01234567`, { headers: { ...auth, traceparent: tp(4) } });
    expect(res.status).toBe(404);
    const [server] = await spansOf(idOf(4), 1);
    expect(server!.name).toBe("GET /api/v1/responses/{id}");
    expect(server!.attributes["http.route"]).toBe("/api/v1/responses/{id}");
    expect(server!.attributes["error.type"]).toBe("NOT_FOUND");
    expect(server!.statusCode).toBe(UNSET);
  });

  it("a Gemini request: its route template, and the finish reason of its candidates", async () => {
    const r = await postJson(`${gw.url}/api/v1beta/models/test/m:generateContent`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, { ...auth, traceparent: tp(5) });
    expect(r.status).toBe(200);
    const spans = await spansOf(idOf(5), 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.name).toBe("POST /api/v1beta/models/{model}:generateContent");
    expect(server.attributes["gen_ai.response.finish_reasons"]).toEqual([r.json.candidates[0].finishReason]);
    expect(spans.find((s) => s.kind === CLIENT)!.attributes["gen_ai.response.finish_reasons"]).toEqual([r.json.candidates[0].finishReason]);
  });

  it("a collector that refuses spans is counted on /metrics and said in the log, once, not once per export", async () => {
    otlp.refuseWith = 500;
    try {
      for (let i = 0; i < 3; i++) {
        expect((await chat({})).status).toBe(200);
        await observabilityOf(gw.gateway).tracing!.flush().catch(() => {}); // the refused export rejects the flush
      }
    } finally {
      otlp.refuseWith = undefined;
    }
    expect(otlp.refused).toBeGreaterThanOrEqual(3);
    const metrics = await (await fetch(gw.metricsUrl!)).text();
    const failed = Number(/gateway_trace_spans_total\{result="failed"\} (\d+)/.exec(metrics)?.[1]);
    expect(failed).toBeGreaterThanOrEqual(6); // a SERVER and a CLIENT span per request
    expect(Number(/gateway_trace_spans_total\{result="exported"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);
    const warnings = log.records().filter((r) => r.level === 40 && String(r.msg).startsWith("tracing:"));
    expect(warnings).toHaveLength(1);
    expect(log.lines.join("\n")).not.toContain(PASSWORD);
  });
});
