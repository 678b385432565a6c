// An OpenAI account out of credit or over its spending cap answers 429 with error.code insufficient_quota
// (protocols.md §1.7), not a rate limit: no wait makes it pass. The gateway treats it as it treats a 402: that
// endpoint is asked once and given up (the model's next endpoint serves), the circuit breaker does not count it, and
// when nothing else serves the SDKs are told not to retry (x-should-retry: false).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("nocredit");
const pricing = { input: "0.000001", output: "0.000002" };
const model = (...providers: string[]) => ({ type: "language", context_window: 1000, max_tokens: 100, endpoints: providers.map((provider) => ({ provider, model: "gpt-x", pricing })) });
const QUOTA = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } };

let broke: FakeOpenAI;
let paid: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  broke = await startFakeOpenAI();
  paid = await startFakeOpenAI({ text: "paid answers" });
  broke.hook = (_req, res) => {
    res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
    res.end(JSON.stringify(QUOTA));
    return true;
  };
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 2, cooldown_ms: 200 } },
    providers: {
      broke: { protocol: "openai", base_url: broke.baseUrl, api_key: "sk-fake-upstream" },
      paid: { protocol: "openai", base_url: paid.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: { "openai/alone": model("broke"), "openai/then-paid": model("broke", "paid") },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await broke?.close();
  await paid?.close();
});
beforeEach(() => {
  broke.requests.length = 0;
  paid.requests.length = 0;
});

/** The gateway's answers as the SDK got them: status, x-should-retry, Retry-After. */
function recorder() {
  const seen: Array<[number, string | null, string | null]> = [];
  const f = async (url: any, init: any) => {
    const r = await fetch(url, init);
    seen.push([r.status, r.headers.get("x-should-retry"), r.headers.get("retry-after")]);
    return r;
  };
  return { seen, fetch: f as typeof fetch };
}
const openai = (f: typeof fetch) => new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 2, fetch: f });
const ask = (f: typeof fetch, model: string, stream = false) =>
  openai(f).chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], stream } as any) as Promise<any>;

const circuit = async (model: string) => {
  const text = await (await fetch(gw.metricsUrl!)).text();
  return text.split("\n").find((l) => l.startsWith(`gateway_circuit_state{model="${model}",provider="broke"}`));
};

describe("an OpenAI 429 insufficient_quota (account out of credit)", () => {
  it("with no other endpoint: one upstream call, one 502 the SDK does not retry (x-should-retry: false, no Retry-After)", async () => {
    const rec = recorder();
    const err: any = await ask(rec.fetch, "openai/alone").catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.error.message).toContain("You exceeded your current quota");
    expect(err.error.message).not.toMatch(/attempts failed/);
    expect(err.error.details).toMatchObject({ reason: "out_of_credit", upstream_status: 429, attempts: [{ provider: "broke" }] });
    expect(rec.seen).toEqual([[502, "false", null]]);
    expect(broke.requests).toHaveLength(1);
  });

  it("the same for a stream", async () => {
    const rec = recorder();
    const err: any = await ask(rec.fetch, "openai/alone", true).catch((e) => e);
    expect(err.status).toBe(502);
    expect(rec.seen).toEqual([[502, "false", null]]);
    expect(broke.requests).toHaveLength(1);
  });

  it("the model's next endpoint serves; a retry goes to it, never back to the endpoint out of credit", async () => {
    paid.failures.push({ kind: "status", status: 500 });
    const r = await ask(recorder().fetch, "openai/then-paid");
    expect(r.choices[0].message.content).toBe("paid answers");
    expect(broke.requests).toHaveLength(1);
    expect(paid.requests).toHaveLength(2);
  });

  it("does not open the circuit: each request still learns why from the upstream, not 'circuit open'", async () => {
    for (let i = 0; i < 3; i++) {
      const err: any = await ask(recorder().fetch, "openai/alone").catch((e) => e);
      expect(err.error.message).toContain("You exceeded your current quota");
    }
    expect(broke.requests).toHaveLength(3);
    expect(await circuit("openai/alone")).toBe('gateway_circuit_state{model="openai/alone",provider="broke"} 0');
  });
});
