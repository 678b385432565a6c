// The validated config, frozen into lookup maps before the first request.
import type { GatewayConfig, KeyBudget, ModelConfig, ProjectConfig, ProviderConfig, Pricing, RateLimits, StoreConfig, UpstreamLimitsConfig } from "../generated/types/gateway.ts";
import type { TrustedProxies } from "../net/trusted-proxies.ts";
import type { CorsPolicy } from "../http/cors-policy.ts";
import type { EgressProxy } from "../net/egress-proxy.ts";

export interface EndpointRuntime {
  provider: string;
  upstreamModel: string;
  pricing: Pricing;
  contextWindow?: number;
  maxTokens?: number;
  supportedParameters?: string[];
  reasoningModel?: boolean;
  nativeResponses?: boolean;
  acceptsReasoningEffort?: boolean;
}

export interface ModelRuntime {
  id: string;
  type: NonNullable<ModelConfig["type"]>;
  config: ModelConfig;
  /** Endpoints whose provider is enabled, in catalog (default preference) order. */
  endpoints: EndpointRuntime[];
  /**
   * When an endpoint of `config.endpoints` retires (`retires:`, as 00:00 UTC ms), aligned with it; absent when none
   * does (core/config/retirement.ts).
   */
  retiresAt?: (number | undefined)[];
}

export interface ProjectRuntime {
  id: string;
  config: ProjectConfig;
}

export interface KeyRuntime {
  id: string;
  projectId: string;
  /** sha256 of the key, raw bytes (compared in constant time). */
  hash: Buffer;
  expiresAt: number | null;
  revoked: boolean;
  /** Declared in gateway.yaml, or created through the admin API (kept in the store). */
  source: "yaml" | "api";
  /** The key's own rpm/tpm (else the project's rate_limits apply). */
  rateLimits?: RateLimits;
  /** The key's own spend cap, on top of the project's. */
  budget?: KeyBudget;
}

export interface AdminKeyRuntime {
  id: string;
  hash: Buffer;
  scope: "read" | "write";
  expiresAt: number | null;
  revoked: boolean;
}

export interface ServerRuntime {
  host: string;
  port: number;
  maxBodyBytes: number;
  upstreamTimeoutMs: number;
  /** server.upstream_answer_timeout_ms: a JSON answer's whole body, a stream's first event. */
  upstreamAnswerTimeoutMs: number;
  /** server.upstream_limits as configured (the provider layer fills in its defaults). */
  upstreamLimits?: UpstreamLimitsConfig;
  publicUrl?: string;
  /** Peers whose X-Forwarded-Host/-Proto are believed (empty: none). */
  trustedProxies: TrustedProxies;
  signingSecret?: string;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  /** Client connections held at once; past it new ones are closed unanswered. */
  maxConnections: number;
  shutdownGraceMs: number;
  /** /readyz answers 503 while the last reload was refused. */
  readyRequiresCurrentConfig: boolean;
  /** server.url_fetch, and the egress proxy its downloads go through (after the checks). */
  urlFetch: { allowHosts: string[]; maxBytes: number; timeoutMs: number; maxBytesInFlight: number; egress?: EgressProxy };
  /** server.egress_proxy, else HTTPS_PROXY / HTTP_PROXY / NO_PROXY (core/net/egress-proxy.ts); undefined: none. */
  egressProxy?: EgressProxy;
  /** server.cors: which web pages on other origins may call the API (undefined: none, no CORS headers at all). */
  cors?: CorsPolicy;
}

export interface MetricsRuntime {
  /** Serve /metrics on host:port, apart from the API. */
  listener: boolean;
  host: string;
  port: number;
  /** The port was set in the config (busy: refuse to start) rather than defaulted (busy: skip, with a warning). */
  portConfigured: boolean;
  /** Bearer token /metrics wants, on either port. */
  token?: string;
  /** Also serve /metrics on the API port (the schema requires a token then). */
  apiPort: boolean;
  /** Export the per-project series (project names and spend). */
  projectLabels: boolean;
}

export interface RuntimeConfig {
  file: string;
  dir: string;
  raw: GatewayConfig;
  server: ServerRuntime;
  metrics: MetricsRuntime;
  store: StoreConfig;
  /** Enabled providers, the built-in `sim` always among them. */
  providers: Map<string, ProviderConfig>;
  /** Providers switched off because their key variable is unset: name -> reason. */
  disabledProviders: Map<string, string>;
  models: Map<string, ModelRuntime>;
  projects: Map<string, ProjectRuntime>;
  /** sha256 hex -> key (those of gateway.yaml; the admin API's are in the store, see core/keys/api-keys.ts). */
  keys: Map<string, KeyRuntime>;
  /** sha256 hex -> admin API key. */
  adminKeys: Map<string, AdminKeyRuntime>;
}
