// The Messages count_tokens body, wherever it is sent (Anthropic's /v1/messages/count_tokens, Vertex's
// count-tokens:rawPredict): generation-only fields are left out (the upstream refuses max_tokens there), and the
// conversation is cleaned as a generation's is (the gateway's own thinking blocks, unsigned ones, Gemini's signatures
// in tool ids), so the count is of what a generation would send and Anthropic does not refuse it.
import type { Target } from "../../../core/contracts/provider.ts";
import { nativeMessagesHistory } from "../../translate/messages-native-history.ts";

const NOT_COUNTED = new Set(["providerOptions", "max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"]);

/** The count_tokens body: the request without what the counter refuses (max_tokens, sampling), the upstream model id. */
export function countTokensBody(body: Record<string, any>, target: Target): Record<string, unknown> {
  const cleaned = nativeMessagesHistory(body).body;
  const out: Record<string, unknown> = {};
  for (const k in cleaned) if (!NOT_COUNTED.has(k)) out[k] = cleaned[k];
  out.model = target.upstreamModel;
  return out;
}
