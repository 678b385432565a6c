// Every request's series names the model asked for and, when an attempt was made, the provider that failed — on the
// shipped pipeline (auth, allowlist, budget, rate limits, router), where policies refuse before any routing, and while
// a circuit is open, where nothing is tried.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";

const LIMITED = testKey("lblimited");
const POOR = testKey("lbpoor");
let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const config = policyConfig(fake.baseUrl, { store: { kind: "sqlite", path: "gateway.db" } }) as any;
  config.routing = { backoff_ms: 1 };
  config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 1 } })] };
  config.projects.poor = { keys: [keyEntry("pk", POOR)], budget: { usd: "0.000001", period: "total" } };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const requests = async () => (await gw.gateway.metrics.registry.getSingleMetric("gateway_requests_total")!.get()).values;
const count = async (labels: Record<string, string>) =>
  (await requests()).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
const send = (body: unknown, key = KEY) => postJson(`${gw.baseURL}/chat/completions`, body, auth(key));

describe("gateway_requests_total labels", () => {
  it("an upstream failure (502) names the provider that failed and the model", async () => {
    fake.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    expect((await send(chat("openai/gpt-4o"))).status).toBe(502);
    expect(await count({ endpoint: "chat", model: "openai/gpt-4o", provider: "up", code: "502" })).toBe(1);
    expect(await count({ provider: "", code: "502" })).toBe(0);
  });

  it("402, 403 and 429 name the model asked for, though no provider was tried", async () => {
    expect((await send(chat("anthropic/claude-x"))).status).toBe(403); // not in acme's allowlist
    expect((await send(chat("openai/gpt-4o-mini"), POOR)).status).toBe(402);
    expect((await send(chat("openai/gpt-4o-mini"), LIMITED)).status).toBe(200);
    expect((await send(chat("openai/gpt-4o-mini"), LIMITED)).status).toBe(429);
    expect(await count({ model: "anthropic/claude-x", provider: "", code: "403" })).toBe(1);
    expect(await count({ model: "openai/gpt-4o-mini", provider: "", code: "402" })).toBe(1);
    expect(await count({ model: "openai/gpt-4o-mini", provider: "", code: "429" })).toBe(1);
    expect(await count({ model: "" })).toBe(0);
  });

  it("a model the catalog lacks is counted as unknown, never as the client's string", async () => {
    const name = `nope/${"x".repeat(40)}`;
    expect((await send(chat(name), OTHER)).status).toBe(404); // a project without an allowlist
    expect(await count({ model: "unknown", code: "404" })).toBe(1);
    expect((await requests()).some((v) => String(v.labels.model).includes("nope/"))).toBe(false);
  });
});

describe("while a provider's circuit is open", () => {
  it("the requests skipped without an attempt are its 502s (provider named), so the per-provider error panel shows it", async () => {
    const config = policyConfig(fake.baseUrl) as any;
    config.routing = { backoff_ms: 1, max_attempts: 1, circuit_breaker: { consecutive_failures: 1, cooldown_ms: 60_000 } };
    const own = await startTestGateway(config);
    try {
      const ask = () => postJson(`${own.baseURL}/chat/completions`, chat("openai/gpt-4o"), auth(KEY));
      fake.failures.push({ kind: "status", status: 500 });
      expect((await ask()).status).toBe(502); // tried: opens the circuit
      const skipped = await ask();
      expect(skipped.status).toBe(502);
      expect(skipped.json.error.details.skipped).toEqual([expect.objectContaining({ provider: "up", reason: "circuit_open" })]);
      const values = (await own.gateway.metrics.registry.getSingleMetric("gateway_requests_total")!.get()).values;
      const n = (provider: string) => values.filter((v) => v.labels.code === "502" && v.labels.provider === provider).reduce((s, v) => s + v.value, 0);
      expect(n("up")).toBe(2);
      expect(n("")).toBe(0);
    } finally {
      await own.close();
    }
  });
});
