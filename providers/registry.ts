// protocol name in gateway.yaml -> driver factory. New upstream kinds register here.
import type { ProviderConfig } from "../core/generated/types/gateway.ts";
import type { DriverFactory } from "../core/contracts/builtins.ts";
import { createOpenAIDriver } from "./openai-compatible/index.ts";
import { createSimDriver } from "./sim/index.ts";
import { createAnthropicDriver } from "./anthropic/index.ts";
import { createGeminiDriver } from "./gemini/index.ts";
import { createCohereDriver } from "./cohere/index.ts";
import { createVoyageDriver } from "./voyage/index.ts";
import { createJinaDriver } from "./jina/index.ts";
import { createTogetherDriver } from "./openai-compatible/together.ts";
import { createBedrockDriver } from "./bedrock/index.ts";
import { createVertexDriver } from "./vertex/index.ts";

export const driverFactories: Partial<Record<ProviderConfig["protocol"], DriverFactory>> = {
  openai: (name, pc, rt) => createOpenAIDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  sim: (name, pc) => createSimDriver(name, pc),
  anthropic: (name, pc, rt) => createAnthropicDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  gemini: (name, pc, rt) => createGeminiDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  cohere: (name, pc, rt) => createCohereDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  voyage: (name, pc, rt) => createVoyageDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  jina: (name, pc, rt) => createJinaDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  together: (name, pc, rt) => createTogetherDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  bedrock: (name, pc, rt) => createBedrockDriver(name, pc, { timeoutMs: rt.timeoutMs }),
  vertex: (name, pc, rt) => createVertexDriver(name, pc, { timeoutMs: rt.timeoutMs }),
};

