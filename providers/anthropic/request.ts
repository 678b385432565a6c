// Native Messages request to Anthropic: the client's body passes through; only the model id, the gateway's own
// fields and (for a dollar thinking budget) `thinking` and max_tokens change. The client's anthropic-version and
// anthropic-beta headers are forwarded.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, Target } from "../../core/contracts/provider.ts";
import type { UpstreamRequest } from "../http.ts";
import { outputAsk } from "../../core/metering/output-limit.ts";

const DEFAULT_BASE = "https://api.anthropic.com";
export const DEFAULT_VERSION = "2023-06-01";
const GATEWAY_ONLY = new Set(["providerOptions"]);

function header(h: CallOptions["clientHeaders"], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(",") : v;
}

export function messagesUrl(config: ProviderConfig, target: Target): string {
  const base = (target.credentials?.baseUrl ?? config.base_url ?? DEFAULT_BASE).replace(/\/+$/, "");
  return /\/v1$/.test(base) ? `${base}/messages` : `${base}/v1/messages`;
}

export function anthropicHeaders(config: ProviderConfig, target: Target, clientHeaders: CallOptions["clientHeaders"], forwardClient: boolean): Record<string, string> {
  const h: Record<string, string> = { "content-type": "application/json", accept: "application/json", ...config.headers };
  h["anthropic-version"] = (forwardClient && header(clientHeaders, "anthropic-version")) || DEFAULT_VERSION;
  const beta = forwardClient ? header(clientHeaders, "anthropic-beta") : undefined;
  if (beta) h["anthropic-beta"] = beta;
  const key = target.credentials?.apiKey ?? config.api_key;
  if (key) h["x-api-key"] = key;
  return h;
}

/** The body sent upstream. `forwardClient` is false when the body was translated from chat (no client headers apply). */
export function buildMessagesRequest(
  body: Record<string, any>, target: Target, config: ProviderConfig, providerName: string, call: Pick<CallOptions, "clientHeaders">, forwardClient = true,
): UpstreamRequest {
  return { url: messagesUrl(config, target), headers: anthropicHeaders(config, target, call.clientHeaders, forwardClient), body: JSON.stringify(messagesBody(body, target, providerName)) };
}

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
