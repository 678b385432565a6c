// A 200 whose JSON is not an answer (`null`), on the shipped store (SQLite), through the official openai SDK: it was
// relayed as a 200 `null` (native chat; the SDK then threw TypeError reading 'choices') or crashed the gateway with a
// 500 (an Anthropic upstream translated for chat), billed as a success either way. Now it is a retried 502
// UPSTREAM_ERROR, details.reason invalid_answer, one ledger row with the error and $0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, type Loopback } from "./upstreams/http-fake.ts";

const KEY = testKey("answershape");
let up: Loopback;
let gw: TestGateway;
let openai: OpenAI;
const calls: string[] = [];

beforeAll(async () => {
  up = await listenLoopback((req, res) => {
    req.resume();
    req.on("end", () => {
      calls.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.end("null");
    });
  });
  const model = (provider: string) => ({
    type: "language", context_window: 8000, max_tokens: 100,
    endpoints: [{ provider, model: "m", pricing: { input: "0.000001", output: "0.000002" } }],
  });
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db", spool_dir: "./spool" },
    routing: { backoff_ms: 1, max_retry_after_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: {
      oa: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake" },
      an: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
    },
    models: { "t/chat": model("oa"), "t/anthropic": model("an") },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  openai = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("a 200 whose body is JSON null, through the openai SDK", () => {
  it.each([
    ["t/chat", "oa", "/v1/chat/completions"],
    ["t/anthropic", "an", "/v1/messages"],
  ])("chat on %s: a retried 502 invalid_answer, one ledger row, nothing billed", async (model, provider, path) => {
    const before = calls.filter((c) => c === path).length;
    const requestId = `null-${model}`;
    const err = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-request-id": requestId } })
      .then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider, reason: "invalid_answer" } });
    expect(calls.filter((c) => c === path).length - before).toBeGreaterThan(1); // retried
    const rec = await ledgerRecordOf(gw, requestId);
    expect((await gw.gateway.store.ledger({})).filter((r) => r.requestId === requestId)).toHaveLength(1);
    expect(rec.status).toBe(502);
    expect(Number(rec.costUsd)).toBe(0);
  });
});
