// POST /api/v1/rerank: results ordered by relevance (the provider's order) with a calibrated 0..1 score, cut to top_n, indexes into the
// caller's documents, documents echoed unless providerOptions.<provider>.return_documents is false.
// One request is one billed query (usage.search_units = 1), whatever the document count or what the provider reports
// (the spec). Errors use BAD_REQUEST / UNAUTHORIZED naming.
import { ulid } from "ulid";
import { validateRerank } from "../generated/validators.js";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";
import type { RerankCall, RerankOutput } from "../contracts/media.ts";
import { invalidAnswer } from "../invalid-answer.ts";
import { dispatchCall, extraFields, metadata, requireType, servedModelId, echoTraceId } from "./media.ts";

const KNOWN = ["model", "query", "documents", "top_n", "user", "providerOptions"] as const;

/** A score to rank by: NaN (no score) ranks last. */
export const rankScore = (s: number): number => (Number.isNaN(s) ? -Infinity : s);

/**
 * One increasing map for the whole answer: if every score is already 0..1 they are kept, otherwise (raw logits
 * from some rerankers) all of them go through a logistic. Squashing only the out-of-range ones would put a 0.9
 * above a 1.5 and reorder the provider's ranking. NaN gives 0, ±Infinity 0/1.
 */
export function calibrateAll(scores: number[]): number[] {
  const ranked = scores.map(rankScore);
  if (ranked.every((s) => !Number.isFinite(s) || (s >= 0 && s <= 1))) return ranked.map((s) => Math.min(1, Math.max(0, s)));
  return ranked.map((s) => 1 / (1 + Math.exp(-s)));
}

/**
 * return_documents is a boolean in every namespace: any other value ("no", 0, "false") would be read as "echo" and
 * silently ignored, so it is refused before the upstream call, naming the field.
 */
function checkReturnDocuments(po: unknown): void {
  if (!po || typeof po !== "object") return;
  for (const [ns, bag] of Object.entries(po as Record<string, unknown>)) {
    if (!bag || typeof bag !== "object" || !("return_documents" in bag)) continue;
    const v = (bag as Record<string, unknown>).return_documents;
    if (typeof v !== "boolean") {
      throw new GatewayError(400, "BAD_REQUEST", `providerOptions.${ns}.return_documents must be true or false, not ${JSON.stringify(v) ?? String(v)}`, {
        details: { field: `providerOptions.${ns}.return_documents` },
      });
    }
  }
}

/** providerOptions namespaces that apply: the provider that ran it, the model's catalog providers, its creator. */
function returnDocuments(ctx: GatewayContext): boolean {
  const po = ctx.body.providerOptions;
  if (!po || typeof po !== "object") return true;
  const names = new Set([ctx.resolvedProvider, ...(ctx.model?.config.endpoints.map((e) => e.provider) ?? []), ctx.model?.id.split("/")[0]]);
  for (const n of names) if (n && po[n]?.return_documents === false) return false;
  return true;
}

/**
 * A result, with a numeric score, for each of min(top_n, documents) distinct documents of the caller's: fewer (an
 * empty or missing list) or one without a score would be served as a billed ranking that ranks nothing.
 */
export function checkResults(out: RerankOutput, documents: number, topN: number | undefined, provider: string): void {
  const results: unknown = out?.results;
  const wanted = Math.min(topN ?? documents, documents);
  if (!Array.isArray(results) || results.length < wanted) {
    throw invalidAnswer(provider, `Provider ${provider} returned ${Array.isArray(results) ? results.length : 0} rerank results for ${wanted} documents`);
  }
  const seen = new Set<number>();
  for (const r of results as RerankOutput["results"]) {
    if (!Number.isInteger(r?.index) || r.index < 0 || r.index >= documents || seen.has(r.index)) {
      throw invalidAnswer(provider, `Provider ${provider} returned an invalid document index ${r?.index}`);
    }
    if (typeof r.score !== "number" || Number.isNaN(r.score)) throw invalidAnswer(provider, `Provider ${provider} returned document ${r.index} without a relevance score`);
    seen.add(r.index);
  }
}

async function rerank(ctx: GatewayContext): Promise<void> {
  echoTraceId(ctx);
  const body = ctx.body;
  const model = ctx.model!;
  requireType(model, "reranking", 400, "BAD_REQUEST");
  checkReturnDocuments(body.providerOptions);
  const documents: string[] = body.documents;
  const call: RerankCall = {
    query: body.query,
    documents,
    topN: body.top_n,
    user: body.user,
    providerOptions: body.providerOptions,
    extra: extraFields(body, KNOWN),
  };
  const out = await dispatchCall<RerankOutput>(ctx, "rerank", call, { check: (o, provider) => checkResults(o, documents.length, body.top_n, provider) });
  const echo = returnDocuments(ctx);
  // Ordered and cut by the provider's raw score: the logistic can round large logits to the same 1.0.
  const calibrated = calibrateAll(out.results.map((r) => r.score));
  const results = out.results
    .map((r, i) => ({ index: r.index, relevance_score: calibrated[i]!, raw: rankScore(r.score) }))
    .sort((a, b) => b.raw - a.raw || a.index - b.index)
    .map(({ index, relevance_score }) => ({ index, relevance_score }))
    .slice(0, body.top_n ?? documents.length)
    .map((r) => (echo ? { ...r, document: documents[r.index]! } : r));
  ctx.usage = { inputTokens: typeof out.inputTokens === "number" && Number.isFinite(out.inputTokens) ? out.inputTokens : 0, outputTokens: 0, searchUnits: 1 };
  ctx.response = {
    kind: "json",
    status: 200,
    body: { id: `rrk_${ulid()}`, model: servedModelId(ctx), results, usage: { search_units: 1 }, providerMetadata: metadata(ctx) },
  };
}

export const rerankEndpoint: EndpointSpec = {
  kind: "rerank",
  method: "POST",
  route: "/api/v1/rerank",
  protocol: "openai",
  validate: validateRerank,
  invalidCode: "BAD_REQUEST",
  terminal: rerank,
  openapi: { summary: "Rerank documents by relevance to a query", requestSchema: "RerankRequest", responseSchema: "RerankResult", headers: ["x-mg-trace-id"], responseHeaders: ["x-mg-trace-id"], tag: "Inference" },
};
