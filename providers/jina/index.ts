// Provider `jina`: Jina AI rerank (POST /v1/rerank). Documents are echoed by the gateway, so none are asked back.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, ProviderResult } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { BearerJson, resultsOf } from "../bearer.ts";
import { idHeaders } from "../upstream-request-id.ts";
import type { RerankCall, RerankOutput } from "../../core/contracts/media.ts";

export const JINA_BASE = "https://api.jina.ai/v1";

export function createJinaDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver {
  const api = new BearerJson(name, config, JINA_BASE, defaults.timeoutMs, defaults.limits, defaults.egress);
  return {
    name,
    protocol: "jina",
    async rerank(call: RerankCall, target, opts): Promise<ProviderResult> {
      const body: Record<string, unknown> = { model: target.upstreamModel, query: call.query, documents: call.documents, return_documents: false };
      if (call.topN !== undefined) body.top_n = call.topN;
      const { json, headers } = await api.post(target, "/rerank", body, opts.signal);
      const out: RerankOutput = { results: resultsOf(json?.results), inputTokens: json?.usage?.total_tokens };
      return { kind: "json", body: out, headers: idHeaders(headers) };
    },
    close: () => api.close(),
  };
}
