// Simulated embeddings: feature hashing of word stems, word pairs and character trigrams into the model's
// dimension, with a random sign per feature, then L2-normalised. Deterministic, unit length, and texts that
// share words or spellings point the same way — good enough for semantic-search demos.
import { setTimeout as sleep } from "node:timers/promises";
import type { SimOptions } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { EmbeddingsCall, EmbeddingsOutput } from "../../core/contracts/media.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { fnv1a, isStopword, trigrams, words } from "./features.ts";

export const SIM_DEFAULT_DIMENSIONS = 1536;

export function embedText(text: string, dims: number): Float32Array {
  const acc = new Float64Array(dims);
  const add = (feature: string, weight: number) => {
    for (const seed of [0x811c9dc5, 0x9747b28c]) {
      const h = fnv1a(feature, seed);
      acc[h % dims]! += (h & 0x80000000 ? -1 : 1) * weight * 0.7071;
    }
  };
  const ws = words(text);
  ws.forEach((w, i) => {
    add(`w:${w}`, isStopword(w) ? 0.2 : 1);
    for (const t of trigrams(w)) add(`c:${t}`, 0.3);
    if (i > 0) add(`b:${ws[i - 1]} ${w}`, 0.2);
  });
  if (!ws.length) add(`raw:${text}`, 1);
  let norm = 0;
  for (const x of acc) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = acc[i]! / norm;
  return out;
}

export async function simEmbeddings(call: EmbeddingsCall, _target: Target, opts: CallOptions, sim: SimOptions): Promise<ProviderResult> {
  const dims = call.dimensions ?? call.modelDimensions ?? SIM_DEFAULT_DIMENSIONS;
  await sleep(sim.embedding_ms ?? 20, undefined, { signal: opts.signal });
  const texts = call.input.map((x) => (typeof x === "string" ? x : x.map((t) => `t${t}`).join(" ")));
  const out: EmbeddingsOutput = {
    vectors: texts.map((t) => embedText(t, dims)),
    inputTokens: call.input.reduce((n, x) => n + (typeof x === "string" ? estimateTokens(x) : x.length), 0),
  };
  return { kind: "json", body: out };
}
