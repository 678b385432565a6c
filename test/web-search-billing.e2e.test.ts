// Security issue 25, item 10: paid server tools are priced (catalog `web_search`, per search) and metered from
// what the upstream reports — Anthropic's usage.server_tool_use.web_search_requests, the web_search_call items of
// an OpenAI Responses answer — in JSON and in streams (also when the client leaves mid-stream), into the ledger
// cost. A budgeted request reserves for the searches it allows (max_uses / max_tool_calls, a ceiling written in
// when it sets none) and for the search results filling the context. SQLite store, full default pipeline.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { DEFAULT_WEB_SEARCH_USES } from "../core/metering/server-tools.ts";

const RICH = testKey("search-rich");
const POOR = testKey("search-poor");
const FREE = testKey("search-nobudget");
const IN = 0.000003, OUT = 0.000015, SEARCH = 0.01;
const price = { input: String(IN), output: String(OUT), web_search: String(SEARCH) };

let anthropic: FakeAnthropic;
let openai: FakeOpenAIWithResponses;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  openai = await startFakeOpenAIResponses();
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      anthropic: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "t/claude": { type: "language", context_window: 200_000, max_tokens: 64_000, endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5", pricing: price }] },
      "t/gpt": { type: "language", context_window: 400_000, max_tokens: 128_000, endpoints: [{ provider: "openai", model: "gpt-5", native_responses: true, pricing: price }] },
    },
    projects: {
      rich: { keys: [keyEntry("rich", RICH)], budget: { usd: "1000", period: "month" }, rate_limits: { rpm: 100_000, tpm: 50_000_000 } },
      poor: { keys: [keyEntry("poor", POOR)], budget: { usd: "0.000001", period: "month" } },
      free: { keys: [keyEntry("free", FREE)] },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});
beforeEach(() => {
  anthropic.requests.length = 0;
  openai.requests.length = 0;
  anthropic.pace = undefined;
});

const headers = (key: string) => ({ authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01" });
const ledgerOf = (requestId: string | null) => ledgerRecordOf(gw, requestId);
const search = (extra: Record<string, unknown> = {}) => ({ type: "web_search_20250305", name: "web_search", ...extra });
const ask = (text: string) => [{ role: "user", content: text }];

describe("Anthropic web_search", () => {
  it("20 searches in a JSON answer are billed at the catalog's web_search price", async () => {
    // max_tokens 4000: the fake counts the 20 search results among its output (~1500 tokens), and the meter holds
    // output to what max_tokens allows the whole response.
    const r = await postJson(`${gw.baseURL}/messages`, { model: "t/claude", max_tokens: 4000, messages: ask("News? [searches:20]"), tools: [search({ max_uses: 20 })] }, headers(RICH));
    expect(r.status).toBe(200);
    expect(r.json.usage.server_tool_use).toEqual({ web_search_requests: 20 });
    const e = await ledgerOf(r.headers.get("x-request-id"));
    expect(e.webSearches).toBe(20);
    expect(r.json.usage.output_tokens).toBeLessThan(4000);
    const tokens = r.json.usage.input_tokens * IN + r.json.usage.output_tokens * OUT;
    expect(Number(e.costUsd)).toBeCloseTo(tokens + 20 * SEARCH, 9);
  });

  it("a streamed answer bills the searches message_delta reports", async () => {
    const res = await fetch(`${gw.baseURL}/messages`, { method: "POST", headers: { ...headers(RICH), "content-type": "application/json" }, body: JSON.stringify({ model: "t/claude", max_tokens: 1000, stream: true, messages: ask("News? [searches:4]"), tools: [search({ max_uses: 5 })] }) });
    const text = await res.text();
    expect(text).toContain('"web_search_requests":4');
    const e = await ledgerOf(res.headers.get("x-request-id"));
    expect(e).toMatchObject({ webSearches: 4, outcome: "ok" });
    expect(Number(e.costUsd)).toBeGreaterThan(4 * SEARCH);
  });

  it("a client that leaves after the searches began still pays for them", async () => {
    anthropic.pace = () => 30;
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/messages`, { method: "POST", signal: controller.signal, headers: { ...headers(RICH), "content-type": "application/json" }, body: JSON.stringify({ model: "t/claude", max_tokens: 1000, stream: true, messages: ask("News? [searches:3]"), tools: [search({ max_uses: 3 })] }) });
    const reader = res.body!.getReader();
    let seen = "";
    while ((seen.match(/"type":"server_tool_use"/g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const e = await ledgerOf(res.headers.get("x-request-id"));
    expect(e.outcome).toBe("aborted");
    expect(e.webSearches).toBe(3);
  });

  it("the budget reserves the searches allowed and a context full of results; a tool without max_uses gets a ceiling", async () => {
    const body = { model: "t/claude", max_tokens: 1000, messages: ask("News? [searches:30]"), tools: [search()] };
    const refused = await postJson(`${gw.baseURL}/messages`, body, headers(POOR));
    expect(refused.status).toBe(402);
    // 11 model calls (the first, and one more pass over the context for each search), each 200 000 tokens of context
    // at $3/M, 1000 output at $15/M for the whole response (max_tokens bounds all its passes), and 10 searches at $0.01.
    expect(refused.json.error.details.request_max_usd).toBe("6.715");
    const r = await postJson(`${gw.baseURL}/messages`, body, headers(RICH));
    expect(r.status).toBe(200);
    expect(anthropic.requests.at(-1)!.body.tools[0].max_uses).toBe(DEFAULT_WEB_SEARCH_USES);
    expect((await ledgerOf(r.headers.get("x-request-id"))).webSearches).toBe(DEFAULT_WEB_SEARCH_USES);
    const own = await postJson(`${gw.baseURL}/messages`, { ...body, tools: [search({ max_uses: 3 })] }, headers(POOR));
    // Its own max_uses 3 lowers both: 4 calls and 3 searches.
    expect(own.json.error.details.request_max_usd).toBe("2.445");
  });

  it("without a budget the tool passes through unchanged and is still billed", async () => {
    const r = await postJson(`${gw.baseURL}/messages`, { model: "t/claude", max_tokens: 1000, messages: ask("News? [searches:12]"), tools: [search()] }, headers(FREE));
    expect(r.status).toBe(200);
    expect(anthropic.requests.at(-1)!.body.tools[0].max_uses).toBeUndefined();
    expect((await ledgerOf(r.headers.get("x-request-id"))).webSearches).toBe(12);
  });
});

describe("OpenAI Responses web_search", () => {
  it("each web_search_call of a JSON answer is billed; a budgeted request without max_tool_calls gets a ceiling", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: "t/gpt", input: "Weather in Paris? [searches:3]", tools: [{ type: "web_search" }] }, headers(RICH));
    expect(r.status).toBe(200);
    expect(r.json.output.filter((i: any) => i.type === "web_search_call")).toHaveLength(3);
    expect(openai.requests.at(-1)!.body.max_tool_calls).toBe(DEFAULT_WEB_SEARCH_USES);
    const e = await ledgerOf(r.headers.get("x-request-id"));
    expect(e.webSearches).toBe(3);
    const u = r.json.usage;
    expect(Number(e.costUsd)).toBeCloseTo(u.input_tokens * IN + u.output_tokens * OUT + 3 * SEARCH, 9);
  });

  it("a streamed answer is billed for the calls in its final response", async () => {
    const res = await fetch(`${gw.baseURL}/responses`, { method: "POST", headers: { ...headers(RICH), "content-type": "application/json" }, body: JSON.stringify({ model: "t/gpt", stream: true, max_tool_calls: 2, input: "Weather? [searches:5]", tools: [{ type: "web_search" }] }) });
    expect((await res.text()).match(/event: response\.web_search_call\.completed/g)).toHaveLength(2);
    expect((await ledgerOf(res.headers.get("x-request-id"))).webSearches).toBe(2);
  });

  it("the budget reserves max_tool_calls searches and the context window", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: "t/gpt", input: "Weather?", max_output_tokens: 1000, max_tool_calls: 4, tools: [{ type: "web_search" }] }, headers(POOR));
    expect(r.status).toBe(402);
    // 5 model calls (the first and one per tool call), each 400 000 tokens of context at $3/M, 1000 output at $15/M
    // once (max_output_tokens bounds the whole response), and 4 searches.
    expect(r.json.error.details.request_max_usd).toBe("6.055");
  });
});
