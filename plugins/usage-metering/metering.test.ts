import Big from "big.js";
import { describe, expect, it } from "vitest";
import { postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { fastAndSlowGateways } from "../../test/helpers/fast-and-slow.ts";
import { auth, chat, SANDBOX } from "../../test/helpers/policy-config.ts";

describe("usage-metering plugin", () => {
  const env = fastAndSlowGateways({ words: 200, chunkDelayMs: 10 });
  const byRequest = async (g: TestGateway, requestId: string) => (await g.gateway.store.ledger({})).filter((e) => e.requestId === requestId);

  // That the record is written before the answer completes is checked where a slow store can show it
  // (test/key-budget.e2e.test.ts): with this in-memory store the write is done by the time the ledger is read.
  it("writes one ledger record per request with tokens and the exact decimal cost", async () => {
    const r = await postJson(`${env.gw.baseURL}/chat/completions`, chat(), auth(undefined, { "x-request-id": "req-meter-1" }));
    expect(r.status).toBe(200);
    const [e, ...rest] = await byRequest(env.gw, "req-meter-1");
    expect(rest).toHaveLength(0);
    const { prompt_tokens: p, completion_tokens: c } = r.json.usage;
    expect(e).toMatchObject({
      project: "acme", keyId: "k1", model: "openai/gpt-4o-mini", provider: "up", attempts: 1, endpoint: "chat",
      inputTokens: p, outputTokens: c, status: 200, outcome: "ok", sandbox: false, estimated: false,
      generationId: r.json.providerMetadata.gateway.generationId,
    });
    // $0.000001 per input token, $0.000002 per output token, in exact decimals.
    expect(e!.costUsd).toBe(new Big(p).times("0.000001").plus(new Big(c).times("0.000002")).toFixed());
    expect(e!.costPico).toBe(BigInt(p * 1_000_000 + c * 2_000_000));
    expect(e!.latencyMs).toBeGreaterThan(0);
  });

  it("meters a stream from the stream's own usage, even when the client did not ask for it", async () => {
    const res = await fetch(`${env.gw.baseURL}/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "x-request-id": "req-meter-2" }) },
      body: JSON.stringify(chat("openai/gpt-4o-mini", { stream: true })),
    });
    const text = await res.text();
    expect(text).not.toContain('"usage":{');
    const [e] = await byRequest(env.gw, "req-meter-2");
    expect(e).toMatchObject({ outcome: "ok", estimated: false, status: 200 });
    expect(e!.outputTokens).toBeGreaterThan(0);
    expect(e!.ttftMs).not.toBeNull();
  });

  it("bills a client that leaves mid-stream for what was relayed", async () => {
    const ac = new AbortController();
    const res = await fetch(`${env.slowGw.baseURL}/chat/completions`, {
      method: "POST", signal: ac.signal, headers: { "content-type": "application/json", ...auth(undefined, { "x-request-id": "req-meter-3" }) },
      body: JSON.stringify(chat("openai/gpt-4o-mini", { stream: true, max_tokens: 500 })),
    });
    const reader = res.body!.getReader();
    let seen = "";
    while ((seen.match(/data: /g) ?? []).length < 10) seen += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    let e;
    for (let i = 0; i < 100 && !e; i++) {
      [e] = await byRequest(env.slowGw, "req-meter-3");
      if (!e) await new Promise((r) => setTimeout(r, 20));
    }
    expect(e).toMatchObject({ outcome: "aborted", estimated: true });
    expect(e!.outputTokens).toBeGreaterThanOrEqual(9);
    expect(e!.outputTokens).toBeLessThan(200);
    expect(e!.costPico).toBeGreaterThan(0n);
  });

  it("records sandbox traffic at cost 0", async () => {
    const r = await postJson(`${env.gw.baseURL}/chat/completions`, chat(), auth(SANDBOX, { "x-request-id": "req-meter-4" }));
    expect(r.status).toBe(200);
    const [e] = await byRequest(env.gw, "req-meter-4");
    expect(e).toMatchObject({ sandbox: true, costUsd: "0", costPico: 0n, keyId: "sandbox" });
    expect(e!.outputTokens).toBeGreaterThan(0);
  });

  it("records a failed upstream call at cost 0 with its status", async () => {
    env.fake.failures.push({ kind: "status", status: 400 });
    const r = await postJson(`${env.gw.baseURL}/chat/completions`, chat(), auth(undefined, { "x-request-id": "req-meter-5" }));
    const [e] = await byRequest(env.gw, "req-meter-5");
    expect(e).toMatchObject({ status: r.status, outcome: "error", costUsd: "0" });
  });

  it("exports tokens and cost by project and model to Prometheus", async () => {
    const text = await (await fetch(env.gw.metricsUrl!)).text();
    expect(text).toMatch(/gateway_project_tokens_total\{project="acme",model="openai\/gpt-4o-mini",direction="output"\} \d+/);
    expect(text).toMatch(/gateway_project_cost_usd_total\{project="acme",model="openai\/gpt-4o-mini"\} [0-9.e-]+/);
  });
});
