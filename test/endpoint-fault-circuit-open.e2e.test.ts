// A model whose first endpoint is given up for its own fault (an account out of credit, a refused key) and whose
// other endpoint is only skipped for an open circuit: that circuit lets a request through after its cooldown, so the
// client is told when to retry (Retry-After), never that a retry cannot help (x-should-retry: false).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("faultopen");
const COOLDOWN_MS = 60_000; // never over while the test runs
const pricing = { input: "0.000001", output: "0.000002" };
const model = (...providers: string[]) => ({ type: "language", context_window: 1000, max_tokens: 100, endpoints: providers.map((provider) => ({ provider, model: "gpt-x", pricing })) });
const QUOTA = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } };

let quota: FakeOpenAI;
let refused: FakeOpenAI;
let down: FakeOpenAI;
let gw: TestGateway;

const answering = (status: number, body: unknown) => (_req: unknown, res: any) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
  return true;
};

beforeAll(async () => {
  quota = await startFakeOpenAI();
  refused = await startFakeOpenAI();
  down = await startFakeOpenAI();
  quota.hook = answering(429, QUOTA);
  refused.hook = answering(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
  down.hook = answering(500, { error: { message: "The server had an error", type: "server_error" } });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 3, cooldown_ms: COOLDOWN_MS } },
    providers: {
      quota: { protocol: "openai", base_url: quota.baseUrl, api_key: "sk-fake-upstream" },
      refused: { protocol: "openai", base_url: refused.baseUrl, api_key: "sk-fake-upstream" },
      e500: { protocol: "openai", base_url: down.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: { "t/quota-then-down": model("quota", "e500"), "t/refused-then-down": model("refused", "e500") },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([quota, refused, down].map((f) => f?.close()));
});

const chat = (model: string) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });

describe.each([
  ["an account out of credit (429 insufficient_quota)", "t/quota-then-down", "You exceeded your current quota"],
  ["a refused key (401)", "t/refused-then-down", "Incorrect API key provided"],
])("%s, the model's other endpoint's circuit open", (_what, model, said) => {
  it("the 502 says when to retry (the cooldown left), not 'do not retry'", async () => {
    // e500 fails until its circuit opens (3 failures in a row): then it is skipped.
    let r = await chat(model);
    for (let i = 0; i < 5 && !r.json.error?.details?.skipped; i++) r = await chat(model);
    expect(r.json.error.details.skipped).toEqual([{ model, provider: "e500", reason: "circuit_open" }]);

    expect(r.status).toBe(502);
    expect(r.headers.get("x-should-retry")).toBeNull();
    const retryAfter = Number(r.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(COOLDOWN_MS / 1000);
    // Both reasons are told: the endpoint's own fault, and the other's open circuit.
    expect(r.json.error.message).toContain(said);
    expect(r.json.error.message).toContain("circuit open");
    expect(r.json.error.details.attempts).toMatchObject([{ provider: model.startsWith("t/quota") ? "quota" : "refused", status: 502 }]);
  });
});
