// The Messages request body, wherever it is sent (Anthropic's API, Bedrock InvokeModel, Vertex rawPredict): the
// client's body passes through; only the model id, the gateway's own fields and (for a dollar thinking budget)
// `thinking` and max_tokens change. Each transport adds its own addressing and headers.
import type { Target } from "../../../core/contracts/provider.ts";
import { outputAsk } from "../../../core/metering/output-limit.ts";

const GATEWAY_ONLY = new Set(["providerOptions"]);

/** The client's body with the upstream's model id, without the gateway's own fields, a dollar thinking budget applied. */
export function messagesBody(body: Record<string, any>, target: Target, providerName: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in body) if (!GATEWAY_ONLY.has(k)) out[k] = body[k];
  out.model = target.upstreamModel;
  applyMessagesLimit(out, body, target, providerName);
  return out;
}

/**
 * max_tokens, and `thinking` from a dollar budget (providerOptions.<provider>.thinkingBudget) when the body has none,
 * exactly as outputAsk computes them: what the budget reserved for this request.
 */
export function applyMessagesLimit(out: Record<string, unknown>, body: Record<string, any>, target: Target, provider: string): void {
  const ask = outputAsk(body, "messages", "messages", { provider, upstreamModel: target.upstreamModel, pricing: target.pricing, maxTokens: target.maxTokens });
  if (out.thinking === undefined && ask.thinking !== undefined) out.thinking = { type: "enabled", budget_tokens: ask.thinking };
  out.max_tokens = ask.limit;
}
