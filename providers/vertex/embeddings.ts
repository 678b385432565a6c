// Embeddings on Vertex: publishers/google/models/{m}:predict with one instance per text ({content, task_type}) and
// parameters.outputDimensionality; token counts come back per vector (statistics.token_count). gemini-embedding-001
// takes a single instance per request on Vertex, the text-embedding-* models up to 250.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { knobs, type EmbeddingsCall, type EmbeddingsOutput } from "../../core/contracts/media.ts";
import { textsOnly } from "../bearer.ts";
import { planBatches, runBatches } from "../batch.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";
import type { VertexEnv } from "./env.ts";
import { vertexSend } from "./send.ts";
import { bodyJson } from "../upstream-json.ts";

export const maxInstances = (model: string) => (/gemini-embedding/.test(model) ? 1 : 250);

export async function vertexEmbeddings(env: VertexEnv, call: EmbeddingsCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  const own = knobs(call, env.name);
  const taskType = own.taskType ?? own.task_type;
  const texts = textsOnly(call.input, env.name);
  let inputTokens = 0;
  const vectors = await runBatches(planBatches(texts, { maxItems: maxInstances(target.upstreamModel) }), async (batch) => {
    const body = {
      instances: batch.map((content) => (taskType ? { content, task_type: taskType } : { content })),
      ...(call.dimensions !== undefined ? { parameters: { outputDimensionality: call.dimensions } } : {}),
    };
    const res = await vertexSend(env, target, opts, { method: "predict", body: JSON.stringify(body) });
    if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
    const json = await bodyJson(env.name, res, opts.signal, "media");
    const predictions: any[] = Array.isArray(json?.predictions) ? json.predictions : [];
    for (const p of predictions) inputTokens += Number(p?.embeddings?.statistics?.token_count) || 0;
    return predictions.map((p) => (p?.embeddings?.values ?? []) as number[]);
  });
  const out: EmbeddingsOutput = { vectors, inputTokens };
  return { kind: "json", body: out };
}
