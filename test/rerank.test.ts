// Rerank: the spec's request limits and response exactly (rrk_ ids, 0..1 scores high to low, top_n, indexes into
// the caller's documents, echo unless return_documents is false, search_units 1), this endpoint's own error
// naming, and the Cohere v2 / Voyage / Jina / Together protocols against faithful fakes.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig, SANDBOX } from "./helpers/media.ts";
import { RERANK_KEY, fakeScore, startFakeCohere, startFakeJina, startFakeTogether, startFakeVoyage, type Reranker } from "./upstreams/rerankers.ts";

const DOCS = [
  "Paris is the capital of France.",
  "The Eiffel Tower is in Paris.",
  "Bananas are rich in potassium.",
  "France borders Spain and Italy.",
];
const QUERY = "What is the capital of France?";

let fakes: Record<string, Reranker>;
let gw: TestGateway;
beforeAll(async () => {
  fakes = { cohere: await startFakeCohere(), voyage: await startFakeVoyage(), jina: await startFakeJina(), together: await startFakeTogether() };
  const providers: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(fakes)) providers[name] = { protocol: name, base_url: f.baseUrl, api_key: RERANK_KEY };
  gw = await startTestGateway(mediaConfig({
    providers,
    models: {
      "cohere/rerank-v3.5": { type: "reranking", endpoints: [{ provider: "cohere", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
      "voyage/rerank-2": { type: "reranking", endpoints: [{ provider: "voyage", model: "rerank-2", pricing: { input: "0.00000005" } }] },
      "jina/jina-reranker-v2": { type: "reranking", endpoints: [{ provider: "jina", model: "jina-reranker-v2-base-multilingual" }] },
      "together/llama-rank": { type: "reranking", endpoints: [{ provider: "together", model: "Salesforce/Llama-Rank-V1" }] },
      "together/m2-bert": { type: "embedding", context_window: 8192, dimensions: 768, endpoints: [{ provider: "together", model: "togethercomputer/m2-bert-80M-8k-retrieval" }] },
      "cohere/embed-v4": { type: "embedding", context_window: 128000, dimensions: 1536, limits: { dimensions: "native", dimension_values: [256, 512, 1024, 1536] }, endpoints: [{ provider: "cohere", model: "embed-v4.0" }] },
      "voyage/voyage-3.5": { type: "embedding", context_window: 32000, dimensions: 1024, limits: { dimensions: "native", dimension_values: [256, 512, 1024, 2048] }, endpoints: [{ provider: "voyage", model: "voyage-3.5" }] },
    },
  }));
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

const rerank = (body: unknown, key = SANDBOX, headers: Record<string, string> = {}) => postJson(`${gw.baseURL}/rerank`, body, { ...auth(key), ...headers });

describe("rerank on the simulator", () => {
  it("returns the spec's shape: rrk_ id, results high to low with 0..1 scores, indexes and echoed documents", async () => {
    const r = await rerank({ model: "sim/ranker", query: QUERY, documents: DOCS }, SANDBOX, { "x-mg-trace-id": "trace-42" });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-trace-id")).toBe("trace-42");
    expect(r.json.id).toMatch(/^rrk_/);
    expect(r.json.model).toBe("sim/ranker");
    expect(r.json.usage).toEqual({ search_units: 1 });
    expect(r.json.results).toHaveLength(4);
    expect(r.json.results[0].index).toBe(0);
    const scores = r.json.results.map((x: any) => x.relevance_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const x of r.json.results) {
      expect(x.relevance_score).toBeGreaterThanOrEqual(0);
      expect(x.relevance_score).toBeLessThanOrEqual(1);
      expect(x.document).toBe(DOCS[x.index]);
    }
    const banana = r.json.results.find((x: any) => x.index === 2);
    expect(banana.relevance_score).toBeLessThan(0.2);
    expect(r.json.results[0].relevance_score).toBeGreaterThan(0.6);
  });

  it("cuts to top_n and omits documents when providerOptions.<provider>.return_documents is false", async () => {
    const r = await rerank({ model: "sim/ranker", query: QUERY, documents: DOCS, top_n: 2, providerOptions: { sim: { return_documents: false } } });
    expect(r.json.results).toHaveLength(2);
    expect(r.json.results[0]).toEqual({ index: 0, relevance_score: expect.any(Number) });
    const big = await rerank({ model: "sim/ranker", query: QUERY, documents: DOCS, top_n: 1000 });
    expect(big.json.results).toHaveLength(4);
  });

  it("a return_documents that is not a boolean is 400 naming it, before any upstream call (not silently echoed)", async () => {
    for (const [ns, value] of [["sim", "no"], ["sim", 0], ["acme", null], ["cohere", "false"]] as const) {
      const r = await rerank({ model: "sim/ranker", query: QUERY, documents: DOCS, providerOptions: { [ns]: { return_documents: value } } });
      expect(r.status, `${ns}: ${JSON.stringify(value)}`).toBe(400);
      expect(r.json.error).toMatchObject({ code: "BAD_REQUEST", type: "invalid_request_error", details: { field: `providerOptions.${ns}.return_documents` } });
    }
    const r = await rerank({ model: "cohere/rerank-v3.5", query: QUERY, documents: DOCS, providerOptions: { cohere: { return_documents: "no" } } }, LIVE);
    expect(r.status).toBe(400);
    expect(fakes.cohere!.requests).toHaveLength(0);
  });

  it("takes 1000 documents and 8000-character queries; one query is one search unit", async () => {
    const docs = Array.from({ length: 1000 }, (_, i) => `document ${i} about ${i % 7 === 0 ? "capital cities" : "fruit"}`);
    const r = await rerank({ model: "sim/ranker", query: `capital ${"q".repeat(7990)}`, documents: docs, top_n: 5 });
    expect(r.status).toBe(200);
    expect(r.json.results).toHaveLength(5);
    expect(r.json.usage.search_units).toBe(1);
    for (const x of r.json.results) expect(x.index % 7).toBe(0);
  });

  it("names bad input 400 BAD_REQUEST with a type, and auth failures 401 UNAUTHORIZED", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ documents: [] }, "documents"],
      [{ documents: Array.from({ length: 1001 }, () => "d") }, "documents"],
      [{ documents: ["a", 3] }, "documents[1]"],
      [{ query: "" }, "query"],
      [{ query: "q".repeat(8001) }, "query"],
      [{ top_n: 0 }, "top_n"],
      [{ top_n: 1001 }, "top_n"],
      [{ top_n: 2.5 }, "top_n"],
      [{ user: "u".repeat(257) }, "user"],
    ];
    for (const [extra, field] of cases) {
      const r = await rerank({ model: "sim/ranker", query: "q", documents: ["a"], ...extra });
      expect(r.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
      expect(r.json.error).toMatchObject({ code: "BAD_REQUEST", type: "invalid_request_error", details: { field } });
    }
    const missing = await rerank({ model: "sim/ranker", query: "q" });
    expect(missing.json.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "documents" } });
    const wrongType = await rerank({ model: "sim/embed", query: "q", documents: ["a"] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error.code).toBe("BAD_REQUEST");
    for (const headers of [{} as Record<string, string>, { authorization: "Bearer nope" }, { authorization: "Basic abc" }, { authorization: "Bearer mg_live_unknownunknown00" }]) {
      const r = await postJson(`${gw.baseURL}/rerank`, { model: "sim/ranker", query: "q", documents: ["a"] }, headers);
      expect(r.status).toBe(401);
      expect(r.json.error).toMatchObject({ code: "UNAUTHORIZED", type: "authentication_error" });
    }
  });
});

describe("rerank providers", () => {
  const cases = [
    { model: "cohere/rerank-v3.5", fake: "cohere", path: "/v2/rerank", top: "top_n", upstreamModel: "rerank-v3.5" },
    { model: "voyage/rerank-2", fake: "voyage", path: "/v1/rerank", top: "top_k", upstreamModel: "rerank-2" },
    { model: "jina/jina-reranker-v2", fake: "jina", path: "/v1/rerank", top: "top_n", upstreamModel: "jina-reranker-v2-base-multilingual" },
    { model: "together/llama-rank", fake: "together", path: "/v1/rerank", top: "top_n", upstreamModel: "Salesforce/Llama-Rank-V1" },
  ];
  for (const c of cases) {
    it(`${c.fake}: its own wire format in, the gateway's shape out`, async () => {
      const r = await rerank({ model: c.model, query: QUERY, documents: DOCS, top_n: 3, user: "end-user-1" }, LIVE);
      expect(r.status).toBe(200);
      const sent = fakes[c.fake]!.requests[0]!;
      expect(sent.path).toBe(c.path);
      expect(sent.headers.authorization).toBe(`Bearer ${RERANK_KEY}`);
      expect(sent.body).toMatchObject({ model: c.upstreamModel, query: QUERY, documents: DOCS, [c.top]: 3 });
      if (c.fake !== "cohere") expect(sent.body.return_documents).toBe(false);
      expect(r.json.id).toMatch(/^rrk_/);
      expect(r.json.model).toBe(c.model);
      expect(r.json.usage).toEqual({ search_units: 1 });
      expect(r.json.results).toHaveLength(3);
      expect(r.json.results.map((x: any) => x.index)).toEqual([0, 1, 3]); // by the fake's word-overlap score
      for (const x of r.json.results) {
        expect(x.relevance_score).toBeCloseTo(fakeScore(QUERY, DOCS[x.index]!), 6);
        expect(x.document).toBe(DOCS[x.index]);
      }
      const bare = await rerank({ model: c.model, query: QUERY, documents: DOCS, providerOptions: { [c.fake]: { return_documents: false } } }, LIVE);
      expect(bare.json.results.every((x: any) => !("document" in x))).toBe(true);
    });
  }

  it("logit-scale scores (a cross-encoder on Jina) keep the provider's order, and top_n keeps its best", async () => {
    // Jina answers d0=1.5 > d1=0.9 > d3=0.2 > d2=-0.5, already sorted and cut to top_n as the real service does.
    const all = [{ index: 0, relevance_score: 1.5 }, { index: 1, relevance_score: 0.9 }, { index: 3, relevance_score: 0.2 }, { index: 2, relevance_score: -0.5 }];
    const answer = (n: number) => ({ status: 200, body: { model: "jina-reranker-v2-base-multilingual", usage: { total_tokens: 40, prompt_tokens: 40 }, results: all.slice(0, n) } });
    fakes.jina!.failures.push(answer(4));
    const r = await rerank({ model: "jina/jina-reranker-v2", query: QUERY, documents: DOCS }, LIVE);
    expect(r.status).toBe(200);
    expect(r.json.results.map((x: any) => x.index)).toEqual([0, 1, 3, 2]);
    const scores = r.json.results.map((x: any) => x.relevance_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const x of scores) expect(x > 0 && x < 1).toBe(true);
    fakes.jina!.failures.push(answer(2));
    const top = await rerank({ model: "jina/jina-reranker-v2", query: QUERY, documents: DOCS, top_n: 2 }, LIVE);
    expect(top.json.results.map((x: any) => x.index)).toEqual([0, 1]);
    expect(top.json.results[0].relevance_score).toBeGreaterThan(top.json.results[1].relevance_score);
    // An upstream that ignores top_n: the gateway's own cut keeps the best too.
    fakes.jina!.failures.push(answer(4));
    const cut = await rerank({ model: "jina/jina-reranker-v2", query: QUERY, documents: DOCS, top_n: 2 }, LIVE);
    expect(cut.json.results.map((x: any) => x.index)).toEqual([0, 1]);
  });

  it("provider failures are 5xx UPSTREAM_ERROR (retry with backoff)", async () => {
    fakes.cohere!.failures.push({ status: 503 }, { status: 503 }, { status: 503 });
    const r = await rerank({ model: "cohere/rerank-v3.5", query: "q", documents: ["a"] }, LIVE);
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.type).toBeDefined();
  });
});

describe("embeddings on Cohere and Voyage", () => {
  it("cohere: /v2/embed in batches of 96 with input_type and output_dimension, reassembled in order", async () => {
    const input = Array.from({ length: 200 }, (_, i) => `text ${i}`);
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "cohere/embed-v4", input, dimensions: 256, encoding_format: "float", providerOptions: { cohere: { input_type: "search_query" } } }, auth(LIVE));
    expect(r.status).toBe(200);
    const sent = fakes.cohere!.requests;
    expect(sent.map((q) => q.body.texts.length)).toEqual([96, 96, 8]);
    expect(sent[0]!.body).toMatchObject({ model: "embed-v4.0", input_type: "search_query", embedding_types: ["float"], output_dimension: 256 });
    expect(r.json.data).toHaveLength(200);
    expect(r.json.data[150].index).toBe(150);
    expect(r.json.data[150].embedding).toHaveLength(256);
    expect(r.json.usage.prompt_tokens).toBeGreaterThan(0);
    const bad = await postJson(`${gw.baseURL}/embeddings`, { model: "cohere/embed-v4", input: "x", dimensions: 300 }, auth(LIVE));
    expect(bad.status).toBe(422);
  });

  it("together: OpenAI-shaped embeddings through the together protocol, float answers decoded, usage estimated", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "together/m2-bert", input: ["a b c", "d"], encoding_format: "base64" }, auth(LIVE));
    expect(r.status).toBe(200);
    expect(fakes.together!.requests[0]!.path).toBe("/v1/embeddings");
    expect(fakes.together!.requests[0]!.headers.authorization).toBe(`Bearer ${RERANK_KEY}`);
    expect(Buffer.from(r.json.data[1].embedding, "base64").length).toBe(768 * 4);
    expect(r.json.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("voyage: /v1/embeddings with output_dimension and its usage", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "voyage/voyage-3.5", input: ["a", "b"], dimensions: 512, encoding_format: "base64" }, auth(LIVE));
    expect(r.status).toBe(200);
    expect(fakes.voyage!.requests[0]!.body).toMatchObject({ model: "voyage-3.5", input: ["a", "b"], output_dimension: 512, input_type: null });
    expect(Buffer.from(r.json.data[1].embedding, "base64").length).toBe(512 * 4);
    const tokens = await postJson(`${gw.baseURL}/embeddings`, { model: "voyage/voyage-3.5", input: [1, 2, 3] }, auth(LIVE));
    expect(tokens.status).toBe(400);
    expect(tokens.json.error.code).toBe("INVALID_REQUEST");
  });
});
