// The spec: one rerank request is one billed query (usage.search_units always 1), whatever the document count. A
// 250-document rerank on Cohere, which reports 3 billed units for it, is billed and reserved one unit ($0.002).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { RERANK_KEY, startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { periodOf } from "../core/store/periods.ts";
import { picoToUsd } from "../core/money/money.ts";
import { awayFromPeriodEnd } from "./helpers/period-end.ts";

const OPEN = testKey("rank-open");
const CAPPED = testKey("rank-capped");

let cohere: Reranker;
let gw: TestGateway;

beforeAll(async () => {
  cohere = await startFakeCohere();
  gw = await startTestGateway({
    store: { kind: "memory" },
    providers: { cohere: { protocol: "cohere", base_url: cohere.baseUrl, api_key: RERANK_KEY } },
    models: {
      "cohere/rerank-v3.5": { type: "reranking", context_window: 4096, endpoints: [{ provider: "cohere", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
    },
    projects: {
      open: { keys: [keyEntry("open", OPEN)] },
      // Room for one search unit, not for two.
      capped: { keys: [keyEntry("capped", CAPPED)], budget: { usd: "0.003", period: "day" } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await cohere?.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const docs = (n: number) => Array.from({ length: n }, (_, i) => `document ${i} about the capital of France`);
const body = (n: number) => ({ model: "cohere/rerank-v3.5", query: "capital of France", documents: docs(n), top_n: 3 });
const rerank = (n: number, key: string) => postJson(`${gw.baseURL}/rerank`, body(n), auth(key));
// The capped project's budget is a day's: each test runs within one day.
beforeEach(() => awayFromPeriodEnd("day"));

describe("rerank search units (one query per request)", () => {
  it("the Cohere fake reports 3 billed units for 250 documents, as Cohere does", async () => {
    const r = await postJson(`${cohere.baseUrl}/v2/rerank`, { model: "rerank-v3.5", query: "capital of France", documents: docs(250) }, auth(RERANK_KEY));
    expect(r.json.meta.billed_units.search_units).toBe(3);
  });

  it("a 250-document rerank is billed one search unit: usage, x-mg-cost-usd and the ledger say $0.002", async () => {
    const r = await rerank(250, OPEN);
    expect(r.status).toBe(200);
    expect(r.json.usage).toEqual({ search_units: 1 });
    expect(r.headers.get("x-mg-cost-usd")).toBe("0.002");
    const e = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "rerank", searchUnits: 1, costUsd: "0.002" });
  });

  it("the budget reserves one unit: a 250-document rerank fits $0.003, and a second one (0.002 spent) does not", async () => {
    const p = periodOf("day", Date.now());
    const first = await rerank(250, CAPPED);
    expect(first.status).toBe(200);
    expect(picoToUsd(await gw.gateway.store.spent("capped", p.key, p.start))).toBe("0.002");
    const calls = cohere.requests.length;
    const second = await rerank(250, CAPPED);
    expect(second.status).toBe(402);
    expect(second.json.error.code).toBe("BUDGET_EXCEEDED");
    expect(cohere.requests.length).toBe(calls);
    expect(picoToUsd(await gw.gateway.store.spent("capped", p.key, p.start))).toBe("0.002");
  });
});
