// x-mg-generation-id names a ledger record: an answer that has one carries it, a refusal by a policy (which writes
// no record, so a flood of refusals costs the store nothing) carries none, so nobody looks up a record that is not there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";

describe("x-mg-generation-id only where a ledger record has it", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, {
      // acme: openai/* only, and a budget no request fits; other: one request a minute.
      acme: { budget: { usd: "0.0000001", period: "day" } },
      other: { keys: [keyEntry("k2", OTHER, { rate_limits: { rpm: 1 } })] },
    }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;

  it("a served answer names its record; 401, 402, 403 and 429 refusals name none and leave none", async () => {
    const served = await postJson(url(), chat(), auth(OTHER));
    expect(served.status).toBe(200);
    const refused = [
      await postJson(url(), chat(), auth(OTHER)), // rpm 1
      await postJson(url(), chat(), auth(KEY)), // budget
      await postJson(url(), chat("anthropic/claude-x"), auth(KEY)), // allowlist
      await postJson(url(), chat(), auth("mg_live_not_a_key_000000000000000")),
    ];
    expect(refused.map((r) => r.status)).toEqual([429, 402, 403, 401]);
    for (const r of refused) {
      expect(r.headers.get("x-request-id")).toMatch(/\S/);
      expect(r.headers.get("x-mg-generation-id")).toBeNull();
    }
    const id = served.headers.get("x-mg-generation-id");
    expect(id).toBe(served.json.providerMetadata.gateway.generationId);
    const ledger = await gw.gateway.store.ledger({});
    expect(ledger.map((e) => e.generationId)).toEqual([id]);
  });

  it("a request that reached a provider and failed names its record", async () => {
    fake.failures.push(...Array.from({ length: 5 }, () => ({ kind: "status" as const, status: 500 })));
    // A gateway of its own, without the limits and budget above.
    const g = await startTestGateway(policyConfig(fake.baseUrl));
    try {
      const failed = await postJson(`${g.baseURL}/chat/completions`, chat(), auth(OTHER));
      expect(failed.status).toBe(502);
      const id = failed.headers.get("x-mg-generation-id");
      expect(id).toMatch(/\S/);
      const ledger = await g.gateway.store.ledger({});
      expect(ledger.map((e) => [e.generationId, e.status])).toEqual([[id, 502]]);
    } finally {
      fake.failures.length = 0;
      await g.close();
    }
  });
});
