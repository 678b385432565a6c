// Provider `voyage`: Voyage AI — embeddings (POST /v1/embeddings, ≤1000 inputs and a token cap per call) and
// rerank (POST /v1/rerank, top_k).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, ProviderResult } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { BearerJson, resultsOf, textsOnly } from "../bearer.ts";
import { knobs, type EmbeddingsCall, type EmbeddingsOutput, type RerankCall, type RerankOutput } from "../../core/contracts/media.ts";
import { planBatches, runBatches } from "../batch.ts";
import { addCount } from "../usage-count.ts";
import { idHeaders, upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";

export const VOYAGE_BASE = "https://api.voyageai.com/v1";
export const VOYAGE_LIMITS = { maxItems: 1000, maxTokens: 120_000 };

export function createVoyageDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver {
  const api = new BearerJson(name, config, VOYAGE_BASE, defaults.timeoutMs, defaults.limits, defaults.egress);
  return {
    name,
    protocol: "voyage",
    async embeddings(call: EmbeddingsCall, target, opts): Promise<ProviderResult> {
      const own = knobs(call, name);
      const texts = textsOnly(call.input, name);
      let tokens = 0;
      let id: string | undefined; // the first call to answer's, when the input took several
      const vectors = await runBatches(planBatches(texts, VOYAGE_LIMITS, estimateTokens), async (batch) => {
        const body: Record<string, unknown> = { input: batch, model: target.upstreamModel, input_type: own.input_type ?? null };
        if (call.dimensions !== undefined) body.output_dimension = call.dimensions;
        if (own.truncation !== undefined) body.truncation = own.truncation;
        const { json, headers } = await api.post(target, "/embeddings", body, opts.signal);
        id ??= upstreamRequestId(headers);
        tokens = addCount(tokens, json?.usage?.total_tokens);
        const data: any[] = Array.isArray(json?.data) ? [...json.data].sort((a, b) => Number(a?.index) - Number(b?.index)) : [];
        return data.map((d) => d?.embedding as number[]); // checked by the endpoint
      });
      const out: EmbeddingsOutput = { vectors, inputTokens: tokens };
      return { kind: "json", body: out, headers: withUpstreamRequestId(undefined, id) };
    },
    async rerank(call: RerankCall, target, opts): Promise<ProviderResult> {
      const own = knobs(call, name);
      const body: Record<string, unknown> = { query: call.query, documents: call.documents, model: target.upstreamModel, return_documents: false };
      if (call.topN !== undefined) body.top_k = call.topN;
      if (own.truncation !== undefined) body.truncation = own.truncation;
      const { json, headers } = await api.post(target, "/rerank", body, opts.signal);
      const out: RerankOutput = { results: resultsOf(json?.data), inputTokens: json?.usage?.total_tokens };
      return { kind: "json", body: out, headers: idHeaders(headers) };
    },
    close: () => api.close(),
  };
}
