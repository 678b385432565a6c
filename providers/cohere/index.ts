// Provider `cohere`: Cohere API v2 — rerank (POST /v2/rerank) and embed (POST /v2/embed, at most 96 texts a call).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, ProviderResult } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { BearerJson, resultsOf, textsOnly } from "../bearer.ts";
import { knobs, type EmbeddingsCall, type EmbeddingsOutput, type RerankCall, type RerankOutput } from "../../core/contracts/media.ts";
import { planBatches, runBatches } from "../batch.ts";
import { addCount } from "../usage-count.ts";
import { idHeaders, upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export const COHERE_BASE = "https://api.cohere.com";
export const COHERE_EMBED_BATCH = 96;

export function createCohereDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver {
  const api = new BearerJson(name, config, COHERE_BASE, defaults.timeoutMs, defaults.limits, defaults.egress);
  return {
    name,
    protocol: "cohere",
    async rerank(call: RerankCall, target, opts): Promise<ProviderResult> {
      const own = knobs(call, name);
      const body: Record<string, unknown> = { model: target.upstreamModel, query: call.query, documents: call.documents };
      if (call.topN !== undefined) body.top_n = call.topN;
      if (own.max_tokens_per_doc !== undefined) body.max_tokens_per_doc = own.max_tokens_per_doc;
      if (own.priority !== undefined) body.priority = own.priority;
      const { json, headers } = await api.post(target, "/v2/rerank", body, opts.signal);
      // meta.billed_units.search_units is not read: the gateway bills one query per request (the spec).
      const out: RerankOutput = { results: resultsOf(json?.results), inputTokens: json?.meta?.tokens?.input_tokens };
      return { kind: "json", body: out, headers: idHeaders(headers) };
    },
    async embeddings(call: EmbeddingsCall, target, opts): Promise<ProviderResult> {
      const own = knobs(call, name);
      const texts = textsOnly(call.input, name);
      let tokens = 0;
      let id: string | undefined; // the first call to answer's, when the input took several
      const vectors = await runBatches(planBatches(texts, { maxItems: COHERE_EMBED_BATCH }), async (batch) => {
        const body: Record<string, unknown> = {
          model: target.upstreamModel, texts: batch, input_type: own.input_type ?? "search_document", embedding_types: ["float"],
        };
        if (call.dimensions !== undefined) body.output_dimension = call.dimensions;
        if (own.truncate !== undefined) body.truncate = own.truncate;
        const { json, headers } = await api.post(target, "/v2/embed", body, opts.signal);
        id ??= upstreamRequestId(headers);
        tokens = addCount(tokens, json?.meta?.billed_units?.input_tokens);
        const float = json?.embeddings?.float;
        return (Array.isArray(float) ? float : []) as number[][]; // each vector checked by the endpoint
      });
      const out: EmbeddingsOutput = { vectors, inputTokens: tokens };
      return { kind: "json", body: out, headers: withUpstreamRequestId(undefined, id) };
    },
    close: () => api.close(),
  };
}
