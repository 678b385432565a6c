// Provider `together`: Together AI, an OpenAI-protocol host, so a configuration of this driver: chat, embeddings and
// images are the openai driver's (with Together's base URL); rerank is Together's own POST /v1/rerank.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, ProviderResult } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { BearerJson, resultsOf } from "../bearer.ts";
import { idHeaders } from "../upstream-request-id.ts";
import type { RerankCall, RerankOutput } from "../../core/contracts/media.ts";
import { createOpenAIDriver } from "./index.ts";

export const TOGETHER_BASE = "https://api.together.xyz/v1";

export function createTogetherDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver {
  const api = new BearerJson(name, config, TOGETHER_BASE, defaults.timeoutMs, defaults.limits, defaults.egress);
  const openai = createOpenAIDriver(name, { ...config, base_url: config.base_url ?? TOGETHER_BASE }, defaults);
  return {
    name,
    protocol: "together",
    chat: openai.chat,
    countTokens: openai.countTokens,
    countChatTokens: openai.countChatTokens,
    embeddings: openai.embeddings,
    images: openai.images,
    async rerank(call: RerankCall, target, opts): Promise<ProviderResult> {
      const body: Record<string, unknown> = { model: target.upstreamModel, query: call.query, documents: call.documents, return_documents: false };
      if (call.topN !== undefined) body.top_n = call.topN;
      const { json, headers } = await api.post(target, "/rerank", body, opts.signal);
      const out: RerankOutput = { results: resultsOf(json?.results), inputTokens: json?.usage?.prompt_tokens ?? json?.usage?.total_tokens };
      return { kind: "json", body: out, headers: idHeaders(headers) };
    },
    close: async () => {
      await Promise.all([api.close(), openai.close?.()]);
    },
  };
}
