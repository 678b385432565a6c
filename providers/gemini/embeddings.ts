// Gemini embeddings: models/{m}:batchEmbedContents, at most 100 requests per call, split and reassembled in
// order. outputDimensionality is Gemini's native `dimensions`; taskType comes from providerOptions.<provider>.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { knobs, type EmbeddingsCall, type EmbeddingsOutput } from "../../core/contracts/media.ts";
import { textsOnly } from "../bearer.ts";
import { planBatches, runBatches } from "../batch.ts";
import { geminiRequest } from "./request.ts";
import { geminiJson } from "./media-http.ts";
import type { GeminiEnv } from "./env.ts";

export const GEMINI_EMBED_BATCH = 100;

export async function geminiEmbeddings(env: GeminiEnv, call: EmbeddingsCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  const own = knobs(call, env.name);
  const texts = textsOnly(call.input, env.name);
  const model = target.upstreamModel.startsWith("models/") ? target.upstreamModel : `models/${target.upstreamModel}`;
  const vectors = await runBatches(planBatches(texts, { maxItems: GEMINI_EMBED_BATCH }), async (batch) => {
    const requests = batch.map((text) => {
      const r: Record<string, unknown> = { model, content: { parts: [{ text }] } };
      const taskType = own.taskType ?? own.task_type;
      if (taskType) r.taskType = taskType;
      if (call.dimensions !== undefined) r.outputDimensionality = call.dimensions;
      return r;
    });
    const json = await geminiJson(env, geminiRequest(env.config, target, "batchEmbedContents", { requests }), opts.signal, target.timeoutMs);
    // Checked by the endpoint: a count that does not match, or a vector that is not numbers, is an invalid answer.
    const embeddings: unknown = json?.embeddings;
    return Array.isArray(embeddings) ? embeddings.map((e) => e?.values as number[]) : [];
  });
  // The Gemini API reports no token usage for embeddings: the endpoint estimates it.
  const out: EmbeddingsOutput = { vectors, inputTokens: 0 };
  return { kind: "json", body: out };
}
