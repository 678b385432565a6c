// Malformed 200 answers from Cohere, Voyage and Jina (rerank) and Cohere and Voyage (embeddings): a rerank answer
// with no results, fewer than asked for or entries without a relevance_score was a billed 200 ranking nothing; a
// Voyage answer whose data had no embedding was a 500 INTERNAL; a vector sent as a string was served as its letters;
// usage as a string billed $0. Each malformed answer is now a retried 502 with details.reason invalid_answer.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { RERANK_KEY, startFakeCohere, startFakeJina, startFakeVoyage, type Reranker } from "./upstreams/rerankers.ts";

let fakes: Record<string, Reranker>;
let gw: TestGateway;
beforeAll(async () => {
  fakes = { cohere: await startFakeCohere(), voyage: await startFakeVoyage(), jina: await startFakeJina() };
  const providers: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(fakes)) providers[name] = { protocol: name, base_url: f.baseUrl, api_key: RERANK_KEY };
  // Each case fails its endpoint twice on purpose: the circuit must not open between them.
  gw = await startTestGateway({ ...mediaConfig({
    providers,
    models: {
      "cohere/rerank-v3.5": { type: "reranking", endpoints: [{ provider: "cohere", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
      "voyage/rerank-2": { type: "reranking", endpoints: [{ provider: "voyage", model: "rerank-2", pricing: { input: "0.00000005" } }] },
      "jina/jina-reranker-v2": { type: "reranking", endpoints: [{ provider: "jina", model: "jina-reranker-v2-base-multilingual" }] },
      "cohere/embed-v4": { type: "embedding", context_window: 128000, dimensions: 3, endpoints: [{ provider: "cohere", model: "embed-v4.0", pricing: { input: "0.00000012" } }] },
      "voyage/voyage-3.5": { type: "embedding", context_window: 32000, dimensions: 3, endpoints: [{ provider: "voyage", model: "voyage-3.5", pricing: { input: "0.00000006" } }] },
    },
  }), routing: { circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } } });
});
afterAll(async () => {
  await gw.close();
  for (const f of Object.values(fakes)) await f.close();
});
beforeEach(() => {
  for (const f of Object.values(fakes)) {
    f.requests.length = 0;
    f.failures.length = 0;
  }
});

const DOCS = ["apples are red", "bananas are yellow"];

async function expectInvalid(fake: Reranker, path: string, body: Record<string, unknown>, answer: unknown) {
  fake.failures.push({ status: 200, body: answer }, { status: 200, body: answer });
  const r = await postJson(`${gw.baseURL}${path}`, body, auth(LIVE));
  expect(r.status, r.text).toBe(502);
  expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "invalid_answer" } });
  expect(fake.requests).toHaveLength(2);
  const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
  expect(record.costPico).toBe(0n);
  fake.requests.length = 0;
}

describe("a malformed rerank answer", () => {
  it("no results, too few, or a result without a score is a retried 502, not a billed empty ranking", async () => {
    const body = (model: string) => ({ model, query: "fruit", documents: DOCS });
    await expectInvalid(fakes.cohere!, "/rerank", body("cohere/rerank-v3.5"), {});
    await expectInvalid(fakes.jina!, "/rerank", body("jina/jina-reranker-v2"), { results: [] });
    await expectInvalid(fakes.voyage!, "/rerank", body("voyage/rerank-2"), { object: "list", data: [{ index: 0, relevance_score: 0.9 }] });
    await expectInvalid(fakes.cohere!, "/rerank", body("cohere/rerank-v3.5"), { results: [{ index: 0 }, { index: 1, relevance_score: null }] });
  });
});

describe("a malformed embeddings answer", () => {
  it("Voyage data without an embedding, or a string vector, is a retried 502 (not a 500, not its letters)", async () => {
    const body = { model: "voyage/voyage-3.5", input: "hello" };
    await expectInvalid(fakes.voyage!, "/embeddings", body, { object: "list", data: [{ index: 0 }] });
    await expectInvalid(fakes.voyage!, "/embeddings", body, { object: "list", data: [{ index: 0, embedding: "abc" }], usage: { total_tokens: 1 } });
  });

  it("Cohere embeddings.float as strings is a retried 502", async () => {
    await expectInvalid(fakes.cohere!, "/embeddings", { model: "cohere/embed-v4", input: "hello" }, { embeddings: { float: ["abc"] }, meta: { billed_units: { input_tokens: 1 } } });
  });

  it("usage as a string (Cohere billed_units, Voyage total_tokens) bills the input's estimate, not $0", async () => {
    fakes.cohere!.failures.push({ status: 200, body: { embeddings: { float: [[0.6, 0.8, 0]] }, meta: { billed_units: { input_tokens: "3" } } } });
    fakes.voyage!.failures.push({ status: 200, body: { object: "list", data: [{ index: 0, embedding: [0.6, 0.8, 0] }], usage: { total_tokens: "3" } } });
    for (const model of ["cohere/embed-v4", "voyage/voyage-3.5"]) {
      const r = await postJson(`${gw.baseURL}/embeddings`, { model, input: "hello there, general kenobi" }, auth(LIVE));
      expect(r.status, r.text).toBe(200);
      expect(r.json.usage.prompt_tokens).toBeGreaterThan(0);
      const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
      expect(record.costPico, model).toBeGreaterThan(0n);
    }
  });
});
