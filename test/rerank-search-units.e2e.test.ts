// A rerank is billed the search units the provider reports (Cohere: one per query per 100 documents), and the
// budget reserves as many beforehand. Before, every rerank was billed and reserved one unit whatever its size.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { RERANK_KEY, startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { periodOf } from "../core/store/periods.ts";
import { picoToUsd } from "../core/money/money.ts";

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
      capped: { keys: [keyEntry("capped", CAPPED)], budget: { usd: "0.005", period: "day" } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await cohere?.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const docs = (n: number) => Array.from({ length: n }, (_, i) => `document ${i} about the capital of France`);
const rerank = (n: number, key: string) => postJson(`${gw.baseURL}/rerank`, { model: "cohere/rerank-v3.5", query: "capital of France", documents: docs(n), top_n: 3 }, auth(key));

describe("rerank search units", () => {
  it("a rerank is billed the search units Cohere reports (250 documents: 3), in the ledger and x-mg-cost-usd", async () => {
    const r = await rerank(250, OPEN);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-cost-usd")).toBe("0.006");
    const e = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "rerank", searchUnits: 3, costUsd: "0.006" });
    // Up to 100 documents: one unit.
    const small = await rerank(100, OPEN);
    expect(small.headers.get("x-mg-cost-usd")).toBe("0.002");
  });

  it("the budget reserves a unit per 100 documents: a 250-document rerank does not fit $0.005, a 100-document one does", async () => {
    const calls = cohere.requests.length;
    const r = await rerank(250, CAPPED);
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe("BUDGET_EXCEEDED");
    expect(cohere.requests.length).toBe(calls);
    const p = periodOf("day", Date.now());
    expect(picoToUsd(await gw.gateway.store.spent("capped", p.key, p.start))).toBe("0");
    const ok = await rerank(100, CAPPED);
    expect(ok.status).toBe(200);
    expect(picoToUsd(await gw.gateway.store.spent("capped", p.key, p.start))).toBe("0.002");
  });
});
