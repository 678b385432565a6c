// Circuit breaker and bring-your-own-key end to end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { startTestGateway, testKey, keyEntry, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("health");
const OWN = testKey("ownkeys");
const PLAIN = testKey("nokeys");

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let gw: TestGateway;

const chat = (model: string, key = KEY, extra: Record<string, unknown> = {}) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }], ...extra }, { authorization: `Bearer ${key}` });

async function metric(name: string, labels: string): Promise<number | undefined> {
  const text = await (await fetch(gw.metricsUrl!)).text();
  const line = text.split("\n").find((l) => l.startsWith(name + "{") && labels.split(",").every((p) => l.includes(p)));
  return line ? Number(line.split(" ").pop()) : undefined;
}

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  beta = await startFakeOpenAI({ text: "beta answers" });
  gw = await startTestGateway({
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 2, cooldown_ms: 300 } },
    providers: {
      alpha: { protocol: "openai", base_url: alpha.baseUrl, api_key: "sk-fake-upstream" },
      beta: { protocol: "openai", base_url: beta.baseUrl, api_key: "sk-fake-upstream" },
      // the gateway's own key for gamma is unset: only projects with their own key can use it
      gamma: { protocol: "openai", base_url: alpha.baseUrl, api_key: "${GAMMA_GATEWAY_KEY}" },
      // the gateway's key for delta is wrong; a project's own key replaces it
      delta: { protocol: "openai", base_url: beta.baseUrl, api_key: "sk-gateway-key-that-upstream-rejects" },
    },
    models: {
      "test/duo": { endpoints: [{ provider: "alpha", model: "a" }, { provider: "beta", model: "b" }] },
      "test/byok": { endpoints: [{ provider: "gamma", model: "g" }, { provider: "delta", model: "d" }] },
    },
    projects: {
      p: { keys: [keyEntry("k", KEY)] },
      own: { keys: [keyEntry("k2", OWN)], providers: { gamma: { api_key: "${PROJECT_GAMMA_KEY}" }, delta: { api_key: "sk-fake-upstream" } } },
      plain: { keys: [keyEntry("k3", PLAIN)] },
    },
  }, { env: { PROJECT_GAMMA_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

describe("circuit breaker", () => {
  it("opens after consecutive failures, is skipped while open, closes after a good half-open probe", async () => {
    expect(await metric("gateway_circuit_state", 'provider="alpha"')).toBeUndefined();
    alpha.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 502 });
    for (let i = 0; i < 2; i++) expect((await chat("test/duo")).status).toBe(200); // each falls back to beta
    expect(await metric("gateway_circuit_state", 'model="test/duo",provider="alpha"')).toBe(2);
    expect(await metric("gateway_circuit_transitions_total", 'provider="alpha",from="closed",to="open"')).toBe(1);

    const before = alpha.requests.length;
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.modelAttempts).toEqual([expect.objectContaining({ provider: "beta", status: 200 })]);
    expect(alpha.requests.length).toBe(before); // skipped, not tried

    await sleep(350);
    const probe = await chat("test/duo");
    expect(probe.json.providerMetadata.gateway.resolvedProvider).toBe("alpha");
    expect(await metric("gateway_circuit_state", 'provider="alpha"')).toBe(0);
    expect(await metric("gateway_circuit_transitions_total", 'provider="alpha",from="open",to="half_open"')).toBe(1);
    expect(await metric("gateway_circuit_transitions_total", 'provider="alpha",from="half_open",to="closed"')).toBe(1);
  });

  it("a 4xx request error does not count against the endpoint", async () => {
    for (let i = 0; i < 3; i++) {
      beta.failures.push({ kind: "status", status: 400 });
      await chat("test/duo", KEY, { providerOptions: { gateway: { only: ["beta"] } } });
    }
    expect(await metric("gateway_circuit_state", 'provider="beta"')).toBe(0);
  });
});

describe("bring your own key", () => {
  it("a project's own key is used instead of the gateway's, even for a provider the gateway has no key for", async () => {
    alpha.requests.length = 0;
    const r = await chat("test/byok", OWN);
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("gamma");
    expect(alpha.requests.at(-1)!.headers.authorization).toBe("Bearer sk-fake-upstream");
  });

  it("a project's key replaces a gateway key the upstream rejects", async () => {
    const r = await chat("test/byok", OWN, { providerOptions: { gateway: { only: ["delta"] } } });
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("delta");
  });

  it("projects without their own key do not reach the gateway-less provider", async () => {
    const r = await chat("test/byok", PLAIN);
    // gamma is disabled for them; delta uses the gateway's (rejected) key: a request error, not retried
    expect(r.json.providerMetadata?.gateway?.resolvedProvider).toBeUndefined();
    expect(r.json.error.details.provider).toBe("delta");
  });

  it("providerTimeouts.byok bounds the attempts made with the project's key", async () => {
    alpha.failures.push({ kind: "hang" }, { kind: "hang" });
    const r = await chat("test/byok", OWN, { providerOptions: { gateway: { only: ["gamma"], providerTimeouts: { byok: { gamma: 200 } } } } });
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
    expect(r.status).toBe(504);
    expect(r.json.error.details.attempts).toMatchObject([
      { provider: "gamma", errorCode: "UPSTREAM_TIMEOUT" },
      { provider: "gamma", errorCode: "UPSTREAM_TIMEOUT" },
    ]);
  });
});
