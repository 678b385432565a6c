// Embeddings through Bedrock's InvokeModel, in each model family's own body: Amazon Titan Text Embeddings
// (`amazon.titan-embed-text-*`: one text per call, `inputTextTokenCount` back) and Cohere Embed (`cohere.embed-*`:
// up to 96 texts per call, tokens in the x-amzn-bedrock-input-token-count header). Other families are a 400.
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { knobs, type EmbeddingsCall, type EmbeddingsOutput } from "../../core/contracts/media.ts";
import { readUpstreamJson, type UpstreamResponse } from "../http.ts";
import { textsOnly } from "../bearer.ts";
import { planBatches, runBatches } from "../batch.ts";
import type { BedrockEnv } from "./env.ts";
import { bedrockUrl } from "./url.ts";
import { bedrockFailure } from "./errors.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

/** Cohere Embed on Bedrock takes at most 96 texts per call. */
export const COHERE_BATCH = 96;
/** Titan embeds one text per call: this many calls at once. */
const TITAN_CONCURRENCY = 8;

async function invoke(env: BedrockEnv, target: Target, body: unknown, signal: AbortSignal): Promise<{ json: any; headers: UpstreamResponse["headers"] }> {
  const url = bedrockUrl(env.config, target, env.auth.region, "invoke");
  const req = await env.auth.authorize({ url, headers: { "content-type": "application/json", accept: "application/json", ...env.config.headers }, body: JSON.stringify(body) }, target);
  const res = await env.client.send(req, signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await bedrockFailure(env.name, res);
  return { json: await readUpstreamJson(env.name, res, signal, "media"), headers: res.headers };
}

export async function bedrockEmbeddings(env: BedrockEnv, call: EmbeddingsCall, target: Target, opts: Pick<CallOptions, "signal">): Promise<ProviderResult> {
  const texts = textsOnly(call.input, env.name);
  const own = knobs(call, env.name);
  const model = target.upstreamModel;
  let tokens = 0;
  let id: string | undefined; // the first call to answer's (Titan takes one call per text)
  let vectors: number[][];
  if (/(^|[./])amazon\.titan-embed-text/.test(model)) {
    vectors = await runBatches(planBatches(texts, { maxItems: 1 }), async ([text]) => {
      const body: Record<string, unknown> = { inputText: text };
      // v2 only: a chosen size (256, 512 or 1024) and unit vectors, as the other providers return.
      if (!/-v1(:|$)/.test(model)) {
        if (call.dimensions !== undefined) body.dimensions = call.dimensions;
        body.normalize = true;
      }
      const { json, headers } = await invoke(env, target, body, opts.signal);
      id ??= upstreamRequestId(headers);
      tokens += Number(json?.inputTextTokenCount) || 0;
      return [json?.embedding as number[]];
    }, TITAN_CONCURRENCY);
  } else if (/(^|[./])cohere\.embed/.test(model)) {
    vectors = await runBatches(planBatches(texts, { maxItems: COHERE_BATCH }), async (batch) => {
      const body: Record<string, unknown> = { texts: batch, input_type: own.input_type ?? "search_document", embedding_types: ["float"] };
      if (call.dimensions !== undefined) body.output_dimension = call.dimensions;
      if (own.truncate !== undefined) body.truncate = own.truncate;
      const { json, headers } = await invoke(env, target, body, opts.signal);
      id ??= upstreamRequestId(headers);
      tokens += Number(headers["x-amzn-bedrock-input-token-count"]) || 0;
      // `embeddings` is the float list, or keyed by type when embedding_types was sent.
      return (Array.isArray(json?.embeddings) ? json.embeddings : json?.embeddings?.float ?? []) as number[][];
    });
  } else {
    throw new GatewayError(400, "INVALID_REQUEST", `Provider ${env.name} serves embeddings for Titan (amazon.titan-embed-text-*) and Cohere (cohere.embed-*) models only, not ${model}`, { details: { provider: env.name, field: "model" } });
  }
  if (vectors.length !== texts.length || vectors.some((v) => !Array.isArray(v))) {
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${env.name} returned ${vectors.length} embeddings for ${texts.length} inputs`, { retryable: true, details: { provider: env.name } });
  }
  const out: EmbeddingsOutput = { vectors, inputTokens: tokens };
  return { kind: "json", body: out, headers: withUpstreamRequestId(undefined, id) };
}
