// Gemini API addressing and auth, shared by every Gemini op: `{base}/v1beta/models/{model}:{method}` with the key in
// x-goog-api-key (never in the URL, so it cannot leak into logs).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";
import type { UpstreamRequest } from "../http.ts";

const DEFAULT_BASE = "https://generativelanguage.googleapis.com";

export function geminiUrl(config: ProviderConfig, target: Target, method: string, query = ""): string {
  const base = (target.credentials?.baseUrl ?? config.base_url ?? DEFAULT_BASE).replace(/\/+$/, "");
  const root = /\/v1(beta\d*)?$/.test(base) ? base : `${base}/v1beta`;
  const model = target.upstreamModel.startsWith("models/") ? target.upstreamModel : `models/${target.upstreamModel}`;
  return `${root}/${model}:${method}${query}`;
}

export function geminiHeaders(config: ProviderConfig, target: Target): Record<string, string> {
  const h: Record<string, string> = { "content-type": "application/json", accept: "application/json", ...config.headers };
  const key = target.credentials?.apiKey ?? config.api_key;
  if (key) h["x-goog-api-key"] = key;
  return h;
}

export function geminiRequest(config: ProviderConfig, target: Target, method: string, body: unknown, query = ""): UpstreamRequest {
  return { url: geminiUrl(config, target, method, query), headers: geminiHeaders(config, target), body: JSON.stringify(body) };
}
