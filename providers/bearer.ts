// Shared shape of the simple JSON-over-Bearer providers (Cohere, Voyage, Jina, Together): one pool per origin,
// base URL and key from the provider config or the project's own credentials (BYOK).
import type { ProviderConfig, UpstreamLimitsConfig } from "../core/generated/types/gateway.ts";
import type { EgressProxy } from "../core/net/egress-proxy.ts";
import { GatewayError } from "../core/errors.ts";
import type { Target } from "../core/contracts/provider.ts";
import { UpstreamClient, type UpstreamResponse } from "./http.ts";
import { sendJson } from "./upstream-json.ts";

export class BearerJson {
  readonly client: UpstreamClient;

  constructor(readonly name: string, private readonly config: ProviderConfig, private readonly defaultBase: string, timeoutMs: number, limits?: UpstreamLimitsConfig, egress?: EgressProxy) {
    this.client = new UpstreamClient(name, { connections: config.connections, timeoutMs: config.timeout_ms ?? timeoutMs, origins: [config.base_url ?? defaultBase], limits, egress });
  }

  url(target: Target, path: string): string {
    return `${(target.credentials?.baseUrl ?? this.config.base_url ?? this.defaultBase).replace(/\/+$/, "")}${path}`;
  }

  headers(target: Target): Record<string, string> {
    const key = target.credentials?.apiKey ?? this.config.api_key;
    return { "content-type": "application/json", accept: "application/json", ...this.config.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  }

  /** The answer's JSON, and its headers (for the provider's id of the call: upstream-request-id.ts). */
  post(target: Target, path: string, body: unknown, signal: AbortSignal): Promise<{ json: any; headers: UpstreamResponse["headers"] }> {
    return sendJson(this.client, this.name, { url: this.url(target, path), headers: this.headers(target), body: JSON.stringify(body) }, signal, target.timeoutMs);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** Token-id inputs only make sense to OpenAI-protocol upstreams. */
export function textsOnly(input: string[] | number[][], provider: string): string[] {
  if (input.some((x) => typeof x !== "string")) {
    throw new GatewayError(400, "INVALID_REQUEST", `Provider ${provider} takes text inputs only, not token ids`, { details: { field: "input" } });
  }
  return input as string[];
}

export function resultsOf(list: unknown): { index: number; score: number }[] {
  if (!Array.isArray(list)) return [];
  // A missing or non-numeric score stays NaN (Number(null) would be 0): the endpoint refuses the answer.
  return list.map((r: any) => ({ index: Number(r?.index), score: typeof r?.relevance_score === "number" ? r.relevance_score : NaN }));
}
