// Native Messages request to Anthropic: the shared Messages body (providers/codecs/anthropic-messages) at Anthropic's
// URL with its key. The client's anthropic-version and anthropic-beta headers are forwarded (its betas added to the configured ones).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, Target } from "../../core/contracts/provider.ts";
import type { UpstreamRequest } from "../http.ts";
import { messagesBody } from "../codecs/anthropic-messages/request.ts";
import { mergedBetaHeader } from "../codecs/anthropic-messages/betas.ts";

const DEFAULT_BASE = "https://api.anthropic.com";
export const DEFAULT_VERSION = "2023-06-01";

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
  if (forwardClient) Object.assign(h, mergedBetaHeader(config.headers, clientHeaders["anthropic-beta"]));
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
