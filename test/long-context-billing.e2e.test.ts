// Long prompts on the gateway as shipped (gateway.yaml: SQLite store, the full default pipeline, the default catalog)
// with live keys under budgets: Gemini 2.5 Pro bills a prompt over 200k tokens whole at $2.50 / $15 per million
// (not $1.25 / $10), Claude Sonnet 4.5 with the 1M context an input over 200k tokens at $6 / $22.50 (not $3 / $15).
// The ledger record, x-mg-cost-usd, the budget's spend and /metrics must all say the tier's price, JSON and streamed, on a
// cut stream and after a fallback; a budget holds a request whose prompt may be over the threshold at those prices.
// A Responses request whose mcp tool loop makes several model calls is billed as the provider bills each call: the
// tier is judged on each call's prompt, not on the turns' sum. Sonnet's window is 200k but for a Messages request
// that asks for the 1M context (anthropic-beta context-1m-*): only that one is held up to 1M tokens at the tier.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import Big from "big.js";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { until } from "./helpers/until.ts";
import { periodOf } from "../core/store/periods.ts";
import { picoToUsd } from "../core/money/money.ts";
import { awayFromPeriodEnd } from "./helpers/period-end.ts";

const LONG = testKey("long-ctx");
const TIGHT = testKey("long-tight");
const THREE = testKey("sonnet-three");
const PRO = "google/gemini-2.5-pro";
const SONNET = "anthropic/claude-sonnet-4.5";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;
let docs: TestMcpHttpServer;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  docs = await startMcpHttpServer("docs");
  // Offered the docs server's whoami (the mcp tool), the model calls it once, then answers; other requests as the fake does.
  gemini.script = ({ tools, answered }) => {
    const whoami = tools.find((t) => t.name === "docs__whoami");
    if (!whoami) return undefined;
    return answered ? { text: "read it" } : { call: { name: whoami.name, input: {} } };
  };
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  // A second Gemini host on the same fake, for the fallback: a model whose two endpoints bill different tiers.
  config.providers.gemini2 = { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY };
  config.models["t/pro-two-hosts"] = {
    type: "language", context_window: 1048576, max_tokens: 65536,
    endpoints: [
      { provider: "gemini", model: "gemini-2.5-pro", pricing: { input: "0.00000125", output: "0.00001", long_context: { above_input_tokens: 200000, input: "0.0000025", output: "0.000015" } } },
      { provider: "gemini2", model: "gemini-2.5-pro", pricing: { input: "0.000001", output: "0.00001", long_context: { above_input_tokens: 200000, input: "0.000004", output: "0.00002" } } },
    ],
  };
  config.metrics = { ...config.metrics, project_labels: true };
  config.mcp_servers = { ...config.mcp_servers, docs: { url: docs.url } };
  config.projects.long = { keys: [keyEntry("long-ctx", LONG)], budget: { usd: "100", period: "month" } };
  // Enough for a 1M-character prompt held at $1.25 per million, not at the tier's $2.50.
  config.projects.tight = { keys: [keyEntry("long-tight", TIGHT)], budget: { usd: "2", period: "month" } };
  // Enough for a Sonnet request held at its 200k window ($1.20 at the 1-hour write price), not at 1M tokens at the tier's.
  config.projects.three = { keys: [keyEntry("sonnet-three", THREE)], budget: { usd: "3", period: "month" } };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), docs?.close()]);
});

/** Gemini contents whose JSON is exactly `chars` long: the fake reports promptTokenCount chars / 4. */
function geminiPrompt(chars: number) {
  const overhead = JSON.stringify([{ role: "user", parts: [{ text: "" }] }]).length;
  return [{ role: "user", parts: [{ text: "x".repeat(chars - overhead) }] }];
}

const spentUsd = async (project: string) => {
  const p = periodOf("month", Date.now());
  return picoToUsd(await gw.gateway.store.spent(project, p.key, p.start));
};
// The budgets are a month's, and the spend is read for the month: each test runs within one month.
beforeEach(() => awayFromPeriodEnd("month"));
/** gateway_project_cost_usd_total of the project and model, as /metrics shows it. */
const costSeries = async (project: string, model: string) =>
  (await gw.gateway.metrics.registry.getSingleMetric("gateway_project_cost_usd_total")!.get()).values
    .filter((v) => v.labels.project === project && v.labels.model === model).reduce((n, v) => n + v.value, 0);
const gen = (model: string, body: unknown, key = LONG, stream = false) =>
  postJson(`${gw.url}/api/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, body, { "x-goog-api-key": key });
/** What the ledger billed `record`, recomputed at the given per-token prices. */
const at = (record: { inputTokens: number; outputTokens: number }, input: string, output: string) =>
  new Big(input).times(record.inputTokens).plus(new Big(output).times(record.outputTokens)).toFixed();

describe("Gemini 2.5 Pro over its 200k-token threshold", () => {
  it("JSON: a 250 000-token prompt is billed at $2.50 / $15 per million in the ledger, x-mg-cost-usd, the budget and /metrics", async () => {
    const before = await spentUsd("long");
    const counted = await costSeries("long", PRO);
    const r = await gen(PRO, { contents: geminiPrompt(1_000_000) });
    expect(r.status).toBe(200);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBe(250_000);
    expect(record.outputTokens).toBeGreaterThan(0);
    const billed = at(record, "0.0000025", "0.000015"); // 0.625 for the prompt alone, not 0.3125
    expect(new Big(billed).gte("0.625")).toBe(true);
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
    expect(new Big(await spentUsd("long")).minus(before).toFixed()).toBe(billed);
    expect((await costSeries("long", PRO)) - counted).toBeCloseTo(Number(billed), 9);
  });

  it("200 000 tokens exactly stay at $1.25 / $10", async () => {
    const r = await gen(PRO, { contents: geminiPrompt(800_000) });
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBe(200_000);
    expect(record.costUsd).toBe(at(record, "0.00000125", "0.00001"));
    expect(r.headers.get("x-mg-cost-usd")).toBe(record.costUsd);
  });

  it("streamed, and a stream cut midway: billed at the tier from the usage the chunks carried", async () => {
    const whole = await gen(PRO, { contents: geminiPrompt(1_000_000) }, LONG, true);
    expect(whole.status).toBe(200);
    const streamed = await ledgerRecordOf(gw, whole.headers.get("x-request-id"));
    expect(streamed.inputTokens).toBe(250_000);
    expect(streamed.costUsd).toBe(at(streamed, "0.0000025", "0.000015"));

    gemini.failures.push({ kind: "die-mid-stream", afterChunks: 2 });
    const cut = await fetch(`${gw.url}/api/v1beta/models/${PRO}:streamGenerateContent?alt=sse`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": LONG }, body: JSON.stringify({ contents: geminiPrompt(1_000_000) }),
    });
    await cut.text().catch(() => "");
    const record = await ledgerRecordOf(gw, cut.headers.get("x-request-id"));
    expect(record.inputTokens).toBeGreaterThan(200_000);
    expect(record.costUsd).toBe(at(record, "0.0000025", "0.000015"));
  });

  it("after a fallback, at the tier of the endpoint that served", async () => {
    gemini.failures.push({ kind: "status", status: 503 });
    const r = await gen("t/pro-two-hosts", { contents: geminiPrompt(1_000_000) });
    expect(r.status).toBe(200);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.provider).toBe("gemini2");
    expect(record.costUsd).toBe(at(record, "0.000004", "0.00002"));
    expect(r.headers.get("x-mg-cost-usd")).toBe(record.costUsd);
  });

  it("a budget holds a prompt that may be over the threshold at the tier's prices: $2 cannot start a 1M-character one", async () => {
    const calls = gemini.requests.length;
    const body = { contents: geminiPrompt(1_000_000), generationConfig: { maxOutputTokens: 100 } };
    const r = await gen(PRO, body, TIGHT);
    expect(r.status).toBe(402);
    const info = r.json.error.details.find((d: any) => d.reason === "BUDGET_EXCEEDED").metadata;
    // Its input (at most one token per byte of body) and its 100 output tokens at $2.50 / $15 per million, where the
    // short-prompt prices held $1.25 / $10 (1.25 of a $2 budget, and the request started).
    const bytes = JSON.stringify(body).length;
    expect(info.input_max_usd).toBe(new Big("0.0000025").times(bytes).toFixed());
    expect(info.request_max_usd).toBe(new Big("0.0000025").times(bytes).plus(new Big("0.000015").times(100)).toFixed());
    expect(gemini.requests.length).toBe(calls);
    expect(await spentUsd("tight")).toBe("0");
  });
});

describe("Claude Sonnet 4.5 with the 1M context over its 200k-token threshold", () => {
  it("an input of about 250 000 tokens is billed at $6 / $22.50 per million, not $3 / $15", async () => {
    const before = await spentUsd("long");
    const r = await postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: "y".repeat(1_000_000) }] },
      { "x-api-key": LONG, "anthropic-version": "2023-06-01", "anthropic-beta": "context-1m-2025-08-07" });
    expect(r.status).toBe(200);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.000006", "0.0000225");
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
    expect(new Big(await spentUsd("long")).minus(before).toFixed()).toBe(billed);
  });
});

describe("a Responses request whose mcp tool makes several Gemini 2.5 Pro calls", () => {
  it("two calls of about 110 000 prompt tokens each are billed at $1.25 / $10 each, not their 220 000-token sum at the tier", async () => {
    const from = gemini.requests.length;
    const r = await postJson(`${gw.url}/api/v1/responses`, {
      model: PRO, input: `Ask whoami. ${"z".repeat(440_000)}`,
      tools: [{ type: "mcp", server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" }],
    }, { authorization: `Bearer ${LONG}` });
    expect(r.status).toBe(200);
    expect(r.json.output.map((o: any) => o.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const prompts = gemini.requests.slice(from).map((q) => JSON.stringify(q.body.contents).length >> 2);
    expect(prompts).toHaveLength(2);
    for (const p of prompts) expect(p).toBeLessThan(200_000);
    // The request's own record (its mcp tool call has one too, at no token cost).
    const id = r.headers.get("x-request-id");
    const record = await until("the request's ledger record", async () =>
      (await gw.gateway.store.ledger({})).find((e) => e.requestId === id && e.endpoint === "responses"), 5000);
    // The ledger's counts are the two calls' sum, over the threshold; each call was under it.
    expect(record.inputTokens).toBe(prompts[0]! + prompts[1]!);
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.00000125", "0.00001"); // about 0.277, where the sum at the tier was 0.553
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
  });
});

describe("Claude Sonnet 4.5's 1M context, only for a request that asks for it", () => {
  const messages = (body: Record<string, unknown>, beta?: string) => postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 100, ...body },
    { "x-api-key": THREE, "anthropic-version": "2023-06-01", ...(beta ? { "anthropic-beta": beta } : {}) });
  const imageByUrl = { messages: [{ role: "user", content: [{ type: "text", text: "What is it?" }, { type: "image", source: { type: "url", url: "https://example.com/cat.png" } }] }] };

  it("without the beta, a tiny request with an image by URL is held within the 200k window: a $3 budget takes it", async () => {
    const r = await messages(imageByUrl);
    expect(r.status).toBe(200);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.costUsd).toBe(at(record, "0.000003", "0.000015"));
  });

  it("without the beta, a body over 200 KB is held at most 200k tokens at the base prices: a $3 budget takes it", async () => {
    const r = await messages({ messages: [{ role: "user", content: "y".repeat(300_000) }] });
    expect(r.status).toBe(200);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBeLessThan(200_000);
    expect(record.costUsd).toBe(at(record, "0.000003", "0.000015"));
  });

  it("with the beta, the same request may use 1M tokens at the tier's prices: held at that, over $3", async () => {
    const calls = anthropic.requests.length;
    const r = await messages(imageByUrl, "context-1m-2025-08-07");
    expect(r.status).toBe(402);
    // 1 000 000 input tokens at the tier's $12 per million 1-hour write price, 100 output tokens at $22.50.
    expect(r.json.error.details.request_max_usd).toBe("12.00225");
    expect(anthropic.requests.length).toBe(calls);
  });

  it("the catalog lists each Sonnet endpoint's 200k window, and the 1M one in its long-context tier", async () => {
    const r = await fetch(`${gw.url}/api/v1/models/${SONNET}/endpoints`, { headers: { authorization: `Bearer ${THREE}` } });
    const endpoints = (await r.json()).data.endpoints;
    expect(endpoints.length).toBeGreaterThan(0);
    for (const ep of endpoints) {
      expect(ep.context_length).toBe(200_000);
      expect(ep.pricing.long_context).toMatchObject({ above_input_tokens: 200_000, context_window: 1_000_000 });
    }
  });
});
