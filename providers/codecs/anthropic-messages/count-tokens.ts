// The Messages count_tokens body, wherever it is sent (Anthropic's /v1/messages/count_tokens, Vertex's
// count-tokens:rawPredict): generation-only fields are left out (the upstream refuses max_tokens there).
import type { Target } from "../../../core/contracts/provider.ts";

const NOT_COUNTED = new Set(["providerOptions", "max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"]);

/** The count_tokens body: the request without what the counter refuses (max_tokens, sampling), the upstream model id. */
export function countTokensBody(body: Record<string, any>, target: Target): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in body) if (!NOT_COUNTED.has(k)) out[k] = body[k];
  out.model = target.upstreamModel;
  return out;
}
