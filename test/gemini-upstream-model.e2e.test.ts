// A Gemini-protocol client is told the model the upstream says answered, as chat, Messages and Responses clients are:
// x-mg-upstream-model, providerMetadata.gateway.upstreamModel and gen_ai.response.model on the SERVER and CLIENT spans
// carry the upstream's dated id, while modelVersion stays the gateway id (docs/routing.md). Every upstream protocol a
// Gemini client can be served by: OpenAI chat, Anthropic Messages, and Gemini itself (its own modelVersion).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { SseParser } from "../core/sse/parse.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./helpers/otlp-receiver.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { observabilityOf } from "../core/observability/index.ts";

const KEY = testKey("gemini-upstream-model");
const SERVER = 2;
const CLIENT = 3;
const price = { input: "0.000001", output: "0.000002" };
const dated = (model: string) => `${model}-2024-dated`;

/** Gateway id -> provider and the upstream id configured for it; each fake answers naming `dated(upstream)`. */
const MODELS = {
  "acme/plain": { provider: "oai", upstream: "plain-up" },
  "acme/claude": { provider: "claude", upstream: "claude-up" },
  "acme/gemini": { provider: "gem", upstream: "gemini-up" },
} as const;
const CELLS = Object.entries(MODELS).map(([model, m]) => ({ model, provider: m.provider, answered: dated(m.upstream) }));

let gw: TestGateway;
let otlp: OtlpReceiver;
let fakes: { oai: FakeOpenAI; claude: FakeAnthropic; gem: FakeGemini };

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  fakes = { oai: await startFakeOpenAI(), claude: await startFakeAnthropic(), gem: await startFakeGemini() };
  for (const f of Object.values(fakes)) f.answersAs = dated;
  gw = await startTestGateway({
    telemetry: { service_name: "gemini-upstream-model", otlp: { endpoint: otlp.url } },
    providers: {
      oai: { protocol: "openai", base_url: fakes.oai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: fakes.claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: fakes.gem.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: Object.fromEntries(Object.entries(MODELS).map(([id, m]) => [id, { type: "language", max_tokens: 1024, endpoints: [{ provider: m.provider, model: m.upstream, pricing: price }] }])),
    projects: { acme: { keys: [keyEntry("ci", KEY)], budget: { usd: "100", period: "day" } } },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(Object.values(fakes ?? {}).map((f) => f.close()));
  await otlp?.close();
});

let traces = 0;
/** A fresh traceparent, so each request's spans can be found. */
function traceparent(): { header: string; traceId: string } {
  const traceId = (++traces).toString(16).padStart(32, "c");
  return { header: `00-${traceId}-00f067aa0ba902b7-01`, traceId };
}

async function spansOf(traceId: string): Promise<{ server: ReceivedSpan; client: ReceivedSpan }> {
  for (let i = 0; i < 100; i++) {
    await observabilityOf(gw.gateway).tracing!.flush();
    const spans = otlp.spans.filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const client = spans.find((s) => s.kind === CLIENT);
    if (server && client) return { server, client };
    await sleep(20);
  }
  throw new Error(`trace ${traceId}: its SERVER and CLIENT spans did not arrive`);
}

const hi = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };
const gemini = (model: string, action: string, headers: Record<string, string>) =>
  postJson(`${gw.url}/api/v1beta/models/${model}:${action}`, hi, { "x-goog-api-key": KEY, ...headers });

describe("a Gemini client is told the model the upstream says answered", () => {
  it.each(CELLS)(":generateContent served by $provider", async ({ model, answered }) => {
    const tp = traceparent();
    const r = await gemini(model, "generateContent", { traceparent: tp.header });
    expect(r.status, r.text).toBe(200);
    expect(r.json.modelVersion).toBe(model);
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe(answered);
    expect(r.headers.get("x-mg-upstream-model")).toBe(answered);
    const { server, client } = await spansOf(tp.traceId);
    expect(client.attributes["gen_ai.response.model"]).toBe(answered);
    expect(server.attributes["gen_ai.response.model"]).toBe(answered);
  });

  it.each(CELLS)(":streamGenerateContent served by $provider", async ({ model, answered }) => {
    const tp = traceparent();
    const r = await gemini(model, "streamGenerateContent?alt=sse", { traceparent: tp.header });
    expect(r.status, r.text).toBe(200);
    const events = new SseParser().push(r.text).map((e) => JSON.parse(e.data));
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.modelVersion))).toEqual(new Set([model]));
    expect(r.headers.get("x-mg-upstream-model")).toBe(answered);
    const { server, client } = await spansOf(tp.traceId);
    expect(client.attributes["gen_ai.response.model"]).toBe(answered);
    expect(server.attributes["gen_ai.response.model"]).toBe(answered);
  });
});
