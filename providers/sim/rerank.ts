// Simulated reranker: BM25 over word stems (IDF from the candidate set), blended with character-trigram
// overlap, squashed to a calibrated 0..1 score. Deterministic; documents sharing the query's rare words win.
import { setTimeout as sleep } from "node:timers/promises";
import type { SimOptions } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { RerankCall, RerankOutput } from "../../core/contracts/media.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { isStopword, trigrams, words } from "./features.ts";

function trigramSet(ws: string[]): Set<string> {
  const s = new Set<string>();
  for (const w of ws) for (const t of trigrams(w)) s.add(t);
  return s;
}

export function scoreDocuments(query: string, documents: string[]): number[] {
  const q = [...new Set(words(query).filter((w) => !isStopword(w)))];
  const docs = documents.map(words);
  const avgLen = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length) || 1;
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  const N = docs.length;
  const qTri = trigramSet(q);
  return docs.map((d) => {
    const tf = new Map<string, number>();
    for (const w of d) tf.set(w, (tf.get(w) ?? 0) + 1);
    let bm25 = 0;
    for (const w of q) {
      const f = tf.get(w) ?? 0;
      if (!f) continue;
      const idf = Math.log(1 + (N - (df.get(w) ?? 0) + 0.5) / ((df.get(w) ?? 0) + 0.5));
      bm25 += idf * ((f * 2.2) / (f + 1.2 * (0.25 + 0.75 * (d.length / avgLen))));
    }
    const coverage = q.length ? q.filter((w) => tf.has(w)).length / q.length : 0;
    const dTri = trigramSet(d);
    let shared = 0;
    for (const t of qTri) if (dTri.has(t)) shared++;
    const tri = qTri.size ? shared / qTri.size : 0;
    const raw = bm25 / Math.max(1, q.length) + 1.5 * coverage + 0.5 * tri;
    return Math.round((1 - Math.exp(-raw / 1.2)) * 1e6) / 1e6;
  });
}

export async function simRerank(call: RerankCall, _target: Target, opts: CallOptions, sim: SimOptions): Promise<ProviderResult> {
  await sleep(sim.rerank_ms ?? 30, undefined, { signal: opts.signal });
  const scores = scoreDocuments(call.query, call.documents);
  const out: RerankOutput = {
    results: scores.map((score, index) => ({ index, score })),
    inputTokens: call.documents.reduce((n, d) => n + estimateTokens(d) + estimateTokens(call.query), 0),
  };
  return { kind: "json", body: out };
}
