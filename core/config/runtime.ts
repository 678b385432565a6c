// The validated config, frozen into lookup maps before the first request.
import type { GatewayConfig, ModelConfig, ProjectConfig, ProviderConfig, Pricing, StoreConfig } from "../generated/types/gateway.ts";

export interface EndpointRuntime {
  provider: string;
  upstreamModel: string;
  pricing: Pricing;
  contextWindow?: number;
  maxTokens?: number;
  supportedParameters?: string[];
  reasoningModel?: boolean;
  nativeResponses?: boolean;
}

export interface ModelRuntime {
  id: string;
  type: NonNullable<ModelConfig["type"]>;
  config: ModelConfig;
  /** Endpoints whose provider is enabled, in catalog (default preference) order. */
  endpoints: EndpointRuntime[];
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
}

export interface ServerRuntime {
  host: string;
  port: number;
  maxBodyBytes: number;
  upstreamTimeoutMs: number;
  publicUrl?: string;
  signingSecret?: string;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  shutdownGraceMs: number;
  /** /readyz answers 503 while the last reload was refused. */
  readyRequiresCurrentConfig: boolean;
  urlFetch: { allowHosts: string[]; maxBytes: number; timeoutMs: number };
}

export interface RuntimeConfig {
  file: string;
  dir: string;
  raw: GatewayConfig;
  server: ServerRuntime;
  store: StoreConfig;
  /** Enabled providers, the built-in `sim` always among them. */
  providers: Map<string, ProviderConfig>;
  /** Providers switched off because their key variable is unset: name -> reason. */
  disabledProviders: Map<string, string>;
  models: Map<string, ModelRuntime>;
  projects: Map<string, ProjectRuntime>;
  /** sha256 hex -> key. */
  keys: Map<string, KeyRuntime>;
}
