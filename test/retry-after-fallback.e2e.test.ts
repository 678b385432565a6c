// Retry-After after fallback: a rate limit told by any endpoint reaches the client, not only the last endpoint's.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestGateway, testKey, keyEntry, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("retryafter");

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let gw: TestGateway;

const chat = () => postJson(`${gw.baseURL}/chat/completions`, { model: "test/duo", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
const limited = (seconds: number) => ({ kind: "status" as const, status: 429, headers: { "retry-after": String(seconds) } });
const broken = { kind: "status" as const, status: 500 };

beforeAll(async () => {
  alpha = await startFakeOpenAI();
  beta = await startFakeOpenAI();
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream" });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, max_retry_after_ms: 5000, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: { alpha: provider(alpha.baseUrl), beta: provider(beta.baseUrl) },
    models: { "test/duo": { endpoints: [{ provider: "alpha", model: "a" }, { provider: "beta", model: "b" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

beforeEach(() => {
  alpha.failures.length = 0;
  beta.failures.length = 0;
});

describe("Retry-After when every endpoint failed", () => {
  it("the first endpoint's 429 Retry-After survives a later endpoint's 500", async () => {
    alpha.failures.push(limited(30));
    beta.failures.push(broken);
    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.json.error.details.attempts.map((a: any) => a.provider)).toEqual(["alpha", "beta"]);
    expect(r.headers.get("retry-after")).toBe("30");
  });

  it("the last endpoint's own Retry-After still reaches the client", async () => {
    alpha.failures.push(broken);
    beta.failures.push(limited(30));
    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBe("30");
  });

  it("two endpoints rate-limited: the client is told the sooner one", async () => {
    alpha.failures.push(limited(20));
    beta.failures.push(limited(45));
    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBe("20");
  });

  it("no endpoint named a time: no Retry-After", async () => {
    alpha.failures.push(broken);
    beta.failures.push(broken);
    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBeNull();
  });
});
