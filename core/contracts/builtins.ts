// What the core is given at its composition root (core/builtins.ts): the built-in plugins, their default order and
// the upstream drivers by protocol. The rest of core receives these (on the loaded config) instead of importing
// plugins/ or providers/, so the layers stay acyclic.
import type { ProviderConfig, UpstreamLimitsConfig } from "../generated/types/gateway.ts";
import type { EgressProxy } from "../net/egress-proxy.ts";
import type { PluginDefinition } from "../pipeline/define.ts";
import type { ProviderDriver } from "./provider.ts";
import type { Translators } from "./translator.ts";

/** Settings a driver takes from the gateway rather than from its provider's own config. */
export interface DriverSettings {
  timeoutMs: number;
  /** server.upstream_answer_timeout_ms (providers/http.ts UpstreamClient). */
  answerTimeoutMs?: number;
  /** server.upstream_limits as configured; the drivers know the defaults (providers/upstream-limits.ts). */
  limits?: UpstreamLimitsConfig;
  /** The egress proxy upstream calls go through (server.egress_proxy or HTTPS_PROXY...); undefined: direct. */
  egress?: EgressProxy;
}

export type DriverFactory = (name: string, config: ProviderConfig, settings: DriverSettings) => ProviderDriver;

export interface Builtins {
  plugins: Readonly<Record<string, PluginDefinition<any, any>>>;
  /** The pipeline used when gateway.yaml has none. */
  defaultPipeline(): string[];
  /** gateway.yaml `protocol:` -> driver factory. */
  drivers: Readonly<Partial<Record<ProviderConfig["protocol"], DriverFactory>>>;
  /** (client protocol, upstream protocol) -> translator; applied per attempt by the stream-transcoder plugin. */
  translators: Translators;
}

export function createDriver(builtins: Builtins, name: string, config: ProviderConfig, settings: DriverSettings): ProviderDriver {
  const factory = builtins.drivers[config.protocol];
  // Declared but not implemented yet: every call fails with a clear error rather than the process.
  return factory ? factory(name, config, settings) : { name, protocol: config.protocol };
}
