// store.responses_max_conversation_bytes: every stored response keeps its whole conversation, so a chain continued
// by previous_response_id grows with every turn. Past the bound the next turn is a 400 naming previous_response_id
// and the setting, before any upstream call and billed nothing; a first request whose input alone is past it is a
// 400 naming input unless it is sent with store: false.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import Big from "big.js";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("convlimit");
const LIMIT = 20_000;
let up: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAI();
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db", responses_max_conversation_bytes: LIMIT },
    providers: { up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "t/model": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)], budget: { usd: "100", period: "day" } } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const auth = { authorization: `Bearer ${KEY}` };
const ask = (body: Record<string, unknown>, requestId = `req_${randomUUID()}`) =>
  postJson(`${gw.baseURL}/responses`, { model: "t/model", ...body }, { ...auth, "x-request-id": requestId });
const spent = async () => (await gw.gateway.store.ledger({ project: "p" })).reduce((s, e) => s.plus(e.costUsd), new Big(0)).toString();
const words = (n: number) => "word ".repeat(n / 5);

describe("store.responses_max_conversation_bytes", () => {
  it("a chain grows up to the bound; the turn past it is a 400 naming previous_response_id and the setting, no upstream call, nothing billed", async () => {
    const t1 = await ask({ input: words(8000) });
    expect(t1.status, t1.text).toBe(200);
    const t2 = await ask({ input: words(8000), previous_response_id: t1.json.id });
    expect(t2.status, t2.text).toBe(200);

    const calls = up.requests.length;
    const before = await spent();
    for (const store of [undefined, false]) {
      const t3 = await ask({ input: words(8000), previous_response_id: t2.json.id, ...(store === undefined ? {} : { store }) });
      expect(t3.status).toBe(400);
      expect(t3.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "previous_response_id" });
      expect(t3.json.error.message).toContain("store.responses_max_conversation_bytes (20000)");
      expect(t3.json.error.message).toContain(t2.json.id);
    }
    expect(up.requests.length).toBe(calls);
    expect(await spent()).toBe(before);

    // A short turn still fits: the chain goes on as long as it stays within the bound.
    const t3 = await ask({ input: "And?", previous_response_id: t2.json.id });
    expect(t3.status, t3.text).toBe(200);
  });

  it("a first request whose input alone is past the bound: a 400 naming input when it would be stored, served with store: false", async () => {
    const stored = await ask({ input: words(LIMIT + 1000) });
    expect(stored.status).toBe(400);
    expect(stored.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "input" });
    expect(stored.json.error.message).toContain("store: false");
    const unstored = await ask({ input: words(LIMIT + 1000), store: false });
    expect(unstored.status, unstored.text).toBe(200);
  });
});
