// Retries when an endpoint of the request is skipped for an open circuit: the skipped endpoint's unused attempt must
// not turn into an immediate second request to an endpoint that just said when it could be asked again.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestGateway, testKey, keyEntry, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("retryopen");

let p1: FakeOpenAI;
let p2: FakeOpenAI;
let p3: FakeOpenAI;
let gw: TestGateway;

const chat = (model: string) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
const limited = (headers: Record<string, string>) => ({ kind: "status" as const, status: 429, headers });
const broken = { kind: "status" as const, status: 500 };
const times = (f: FakeOpenAI) => f.requests.length;

beforeAll(async () => {
  [p1, p2, p3] = await Promise.all([startFakeOpenAI({ text: "p1" }), startFakeOpenAI({ text: "p2" }), startFakeOpenAI({ text: "p3" })]);
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream" });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, max_retry_after_ms: 10_000, circuit_breaker: { consecutive_failures: 3, cooldown_ms: 600_000 } },
    providers: { p1: provider(p1.baseUrl), p2: provider(p2.baseUrl), p3: provider(p3.baseUrl) },
    models: {
      "t/tri": { endpoints: [{ provider: "p1", model: "a1" }, { provider: "p2", model: "a2" }, { provider: "p3", model: "a3" }] },
      "t/duo": { endpoints: [{ provider: "p1", model: "b1" }, { provider: "p2", model: "b2" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  // Open p1's circuit for both models: three failures in a row each, served by p2 meanwhile.
  p1.failures.push(broken, broken, broken, broken, broken, broken);
  for (let i = 0; i < 3; i++) {
    expect((await chat("t/tri")).status).toBe(200);
    expect((await chat("t/duo")).status).toBe(200);
  }
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([p1?.close(), p2?.close(), p3?.close()]);
});

beforeEach(() => {
  for (const f of [p1, p2, p3]) {
    f.failures.length = 0;
    f.requests.length = 0;
  }
});

describe("an endpoint skipped for an open circuit", () => {
  it("its attempt does not go to a second request to an endpoint whose Retry-After is past max_retry_after_ms", async () => {
    p2.failures.push(limited({ "retry-after": "30" }));
    p3.failures.push(broken);
    const r = await chat("t/tri");
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBe("30");
    expect(r.json.error.details.skipped).toMatchObject([{ provider: "p1", reason: "circuit_open" }]);
    expect(r.json.error.details.attempts.map((a: any) => a.provider)).toEqual(["p2", "p3"]);
    expect([times(p1), times(p2), times(p3)]).toEqual([0, 1, 1]);
  });

  it("nor to one that asked for a short wait: every usable endpoint is tried once, as if the skipped one were not listed", async () => {
    p2.failures.push(limited({ "retry-after": "2" }));
    p3.failures.push(broken);
    const r = await chat("t/tri");
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBe("2");
    expect([times(p2), times(p3)]).toEqual([1, 1]);
  });

  it("an endpoint left alone still gets its one retry, after its Retry-After", async () => {
    p2.failures.push(limited({ "retry-after-ms": "300" }));
    const at: number[] = [];
    p2.hook = () => { at.push(Date.now()); return false; };
    try {
      const r = await chat("t/duo");
      expect(r.status).toBe(200);
      expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.status])).toEqual([["p2", 502], ["p2", 200]]);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(290);
    } finally {
      p2.hook = undefined;
    }
  });
});
