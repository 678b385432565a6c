// Fake Cohere (v2 rerank + embed), Voyage (embeddings + rerank), Jina (rerank) and Together (rerank) upstreams,
// with each provider's request field names, response shapes and error bodies from reference §4.1/§4.2.
// Relevance: the fraction of query words found in the document (0..1), ties broken by position.
import { approxTokens, fakeVector, sendJson, startFake, type FakeServer } from "./http-fake.ts";

export const RERANK_KEY = "rk-fake-upstream";

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
export function fakeScore(query: string, doc: string): number {
  const q = new Set(words(query));
  const d = new Set(words(doc));
  let hit = 0;
  for (const w of q) if (d.has(w)) hit++;
  return q.size ? Math.round((hit / q.size) * 0.98 * 1e4) / 1e4 + 0.01 : 0.01;
}

function ranked(query: string, documents: string[], top?: number) {
  const all = documents.map((doc, index) => ({ index, relevance_score: fakeScore(query, doc) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return top ? all.slice(0, top) : all;
}

const tokensOf = (query: string, docs: string[]) => docs.reduce((n, d) => n + approxTokens(d) + approxTokens(query), 0);
const unauthorized = (req: { headers: Record<string, any> }) => req.headers.authorization !== `Bearer ${RERANK_KEY}`;

export type Reranker = FakeServer & { baseUrl: string };

/** Cohere: errors are {"id","message"}; /v2/rerank and /v2/embed. */
export async function startFakeCohere(): Promise<Reranker> {
  const fake = (await startFake((req, res) => {
    if (unauthorized(req)) return sendJson(res, 401, { id: "e1", message: "invalid api token" });
    const b = req.body ?? {};
    if (req.method === "POST" && req.path === "/v2/rerank") {
      if (!Array.isArray(b.documents) || b.documents.length > 1000) return sendJson(res, 400, { id: "e2", message: "invalid request: documents must have at most 1000 items" });
      if (b.return_documents !== undefined) return sendJson(res, 400, { id: "e3", message: "invalid request: unknown field return_documents" });
      return sendJson(res, 200, {
        id: "07734bd2-2473-4f07-94e1-0d9f0e6843cf",
        results: ranked(b.query, b.documents, b.top_n),
        // As the real service bills: one search unit per 100 documents.
        meta: { api_version: { version: "2" }, billed_units: { search_units: Math.ceil(b.documents.length / 100) }, tokens: { input_tokens: tokensOf(b.query, b.documents), output_tokens: 0 } },
      });
    }
    if (req.method === "POST" && req.path === "/v2/embed") {
      if (!Array.isArray(b.texts) || b.texts.length > 96) return sendJson(res, 400, { id: "e4", message: "invalid request: texts must have at most 96 items" });
      if (!b.input_type) return sendJson(res, 400, { id: "e5", message: "invalid request: input_type is required for embed-v3 and newer" });
      const dims = b.output_dimension ?? 1536;
      return sendJson(res, 200, {
        id: "b7a9a1d0", texts: b.texts, response_type: "embeddings_by_type",
        embeddings: { float: b.texts.map((t: string) => fakeVector(t, dims, b.model)) },
        meta: { api_version: { version: "2" }, billed_units: { input_tokens: b.texts.reduce((n: number, t: string) => n + approxTokens(t), 0) } },
      });
    }
    return sendJson(res, 404, { id: "e0", message: `no route ${req.path}` });
  }, (status) => ({ id: "ex", message: `fake cohere failure ${status}` }))) as Reranker;
  fake.baseUrl = fake.origin;
  return fake;
}

/** Voyage: errors are {"detail": "..."}; data[] with index; top_k; usage.total_tokens only. */
export async function startFakeVoyage(): Promise<Reranker> {
  const fake = (await startFake((req, res) => {
    if (unauthorized(req)) return sendJson(res, 401, { detail: "Provided API key is invalid." });
    const b = req.body ?? {};
    if (req.method === "POST" && req.path === "/v1/rerank") {
      const data = ranked(b.query, b.documents, b.top_k).map((r) => (b.return_documents ? { ...r, document: b.documents[r.index] } : r));
      return sendJson(res, 200, { object: "list", data, model: b.model, usage: { total_tokens: tokensOf(b.query, b.documents) } });
    }
    if (req.method === "POST" && req.path === "/v1/embeddings") {
      const input: string[] = typeof b.input === "string" ? [b.input] : b.input;
      if (input.length > 1000) return sendJson(res, 400, { detail: "The batch size limit is 1000." });
      const dims = b.output_dimension ?? 1024;
      if (![256, 512, 1024, 2048].includes(dims)) return sendJson(res, 400, { detail: "output_dimension must be one of 256, 512, 1024, 2048" });
      const data = input.map((t, index) => ({ object: "embedding", embedding: fakeVector(t, dims, b.model), index }));
      return sendJson(res, 200, { object: "list", data, model: b.model, usage: { total_tokens: input.reduce((n, t) => n + approxTokens(t), 0) } });
    }
    return sendJson(res, 404, { detail: "Not Found" });
  }, (status) => ({ detail: `fake voyage failure ${status}` }))) as Reranker;
  fake.baseUrl = `${fake.origin}/v1`;
  return fake;
}

/** Jina: results[] with document {text} unless return_documents is false (its default is true). */
export async function startFakeJina(): Promise<Reranker> {
  const fake = (await startFake((req, res) => {
    if (unauthorized(req)) return sendJson(res, 401, { detail: "Unauthorized" });
    const b = req.body ?? {};
    if (req.method === "POST" && req.path === "/v1/rerank") {
      const results = ranked(b.query, b.documents, b.top_n).map((r) => (b.return_documents === false ? r : { ...r, document: { text: b.documents[r.index] } }));
      const t = tokensOf(b.query, b.documents);
      return sendJson(res, 200, { model: b.model, usage: { total_tokens: t, prompt_tokens: t }, results });
    }
    return sendJson(res, 404, { detail: "Not Found" });
  }, (status) => ({ detail: `fake jina failure ${status}` }))) as Reranker;
  fake.baseUrl = `${fake.origin}/v1`;
  return fake;
}

/** Together: {id, object:"rerank", results[{index, relevance_score, document}], usage{prompt,completion,total}}. */
export async function startFakeTogether(): Promise<Reranker> {
  const fake = (await startFake((req, res) => {
    if (unauthorized(req)) return sendJson(res, 401, { error: { message: "Invalid API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
    const b = req.body ?? {};
    if (req.method === "POST" && req.path === "/v1/rerank") {
      const results = ranked(b.query, b.documents, b.top_n).map((r) => ({ ...r, document: b.return_documents ? { text: b.documents[r.index] } : {} }));
      const t = tokensOf(b.query, b.documents);
      return sendJson(res, 200, { id: "oGs6Zt9-62bZhn-8f2ee", object: "rerank", model: b.model, results, usage: { prompt_tokens: t, completion_tokens: 0, total_tokens: t } });
    }
    if (req.method === "POST" && req.path === "/v1/embeddings") {
      // OpenAI-shaped, floats only (encoding_format is ignored), no usage block.
      const input: string[] = typeof b.input === "string" ? [b.input] : b.input;
      return sendJson(res, 200, { object: "list", model: b.model, data: input.map((t, index) => ({ object: "embedding", index, embedding: fakeVector(t, 768, b.model) })) });
    }
    return sendJson(res, 404, { error: { message: "Not Found", type: "invalid_request_error" } });
  }, (status) => ({ error: { message: `fake together failure ${status}`, type: "server_error" } }))) as Reranker;
  fake.baseUrl = `${fake.origin}/v1`;
  return fake;
}
