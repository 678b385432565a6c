// The billed-token series on /metrics (gateway_tokens_total, gateway_project_tokens_total, gateway_project_cost_usd_total)
// and the console's live traffic (read off gateway_tokens_total) agree with the ledger's usage, which leaves sandbox
// traffic out unless asked: a sandbox key's requests are not billed and are not in them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, chat, policyConfig, SANDBOX } from "./helpers/policy-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { trafficOf } from "../core/admin/traffic-sampler.ts";

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  gw = await startTestGateway(policyConfig(fake.baseUrl));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const sum = async (name: string, labels: Record<string, string>) =>
  (await gw.gateway.metrics.registry.getSingleMetric(name)!.get()).values
    .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((n, v) => n + v.value, 0);

describe("sandbox traffic in the billed-token series", () => {
  it("is left out of the token and cost series and the live traffic, as the ledger's usage leaves it out", async () => {
    const sampler = trafficOf(gw.gateway);
    await sampler.sample();
    const live = await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(undefined, { "x-request-id": "req-sbx-live" }));
    const sandbox = await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(SANDBOX, { "x-request-id": "req-sbx-test" }));
    expect([live.status, sandbox.status]).toEqual([200, 200]);
    expect(sandbox.json.usage.completion_tokens).toBeGreaterThan(0);
    await sampler.sample();

    const ledger = await gw.gateway.store.ledger({});
    const billed = ledger.filter((e) => !e.sandbox);
    expect(ledger.filter((e) => e.sandbox)).toHaveLength(1);
    const output = billed.reduce((n, e) => n + e.outputTokens, 0);
    const input = billed.reduce((n, e) => n + e.inputTokens, 0);
    expect(await sum("gateway_tokens_total", { direction: "output" })).toBe(output);
    expect(await sum("gateway_tokens_total", { direction: "input" })).toBe(input);
    expect(await sum("gateway_project_tokens_total", { project: "acme", direction: "output" })).toBe(output);
    expect(await sum("gateway_project_tokens_total", { project: "acme", direction: "input" })).toBe(input);
    // The console's live traffic: the step holding both requests counts the live one's tokens only.
    const points = sampler.points();
    expect(points.reduce((n, p) => n + p.output_tokens, 0)).toBe(output);
    expect(points.reduce((n, p) => n + p.requests, 0)).toBe(2);
  });
});
