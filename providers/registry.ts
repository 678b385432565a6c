// protocol name in gateway.yaml -> driver factory. New upstream kinds register here.
import type { ProviderConfig } from "../core/generated/types/gateway.ts";
import type { RuntimeConfig } from "../core/config/runtime.ts";
import type { ProviderDriver } from "../core/contracts/provider.ts";
import { createOpenAIDriver } from "./openai-compatible/index.ts";
import { createSimDriver } from "./sim/index.ts";
import { createAnthropicDriver } from "./anthropic/index.ts";
import { createGeminiDriver } from "./gemini/index.ts";
import { createCohereDriver } from "./cohere/index.ts";
import { createVoyageDriver } from "./voyage/index.ts";
import { createJinaDriver } from "./jina/index.ts";
import { createTogetherDriver } from "./together/index.ts";

type Factory = (name: string, config: ProviderConfig, runtime: RuntimeConfig) => ProviderDriver;

export const driverFactories: Partial<Record<ProviderConfig["protocol"], Factory>> = {
  openai: (name, pc, rt) => createOpenAIDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  sim: (name, pc) => createSimDriver(name, pc),
  anthropic: (name, pc, rt) => createAnthropicDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  gemini: (name, pc, rt) => createGeminiDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  cohere: (name, pc, rt) => createCohereDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  voyage: (name, pc, rt) => createVoyageDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  jina: (name, pc, rt) => createJinaDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
  together: (name, pc, rt) => createTogetherDriver(name, pc, { timeoutMs: rt.server.upstreamTimeoutMs }),
};

export function createDriver(name: string, config: ProviderConfig, runtime: RuntimeConfig): ProviderDriver {
  const factory = driverFactories[config.protocol];
  if (!factory) {
    // Declared but not implemented yet: every call fails with a clear error rather than the process.
    return { name, protocol: config.protocol };
  }
  return factory(name, config, runtime);
}
