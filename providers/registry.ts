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
  openai: (name, pc, rt) => createOpenAIDriver(name, pc, rt),
  sim: (name, pc) => createSimDriver(name, pc),
  anthropic: (name, pc, rt) => createAnthropicDriver(name, pc, rt),
  gemini: (name, pc, rt) => createGeminiDriver(name, pc, rt),
  cohere: (name, pc, rt) => createCohereDriver(name, pc, rt),
  voyage: (name, pc, rt) => createVoyageDriver(name, pc, rt),
  jina: (name, pc, rt) => createJinaDriver(name, pc, rt),
  together: (name, pc, rt) => createTogetherDriver(name, pc, rt),
  bedrock: (name, pc, rt) => createBedrockDriver(name, pc, rt),
  vertex: (name, pc, rt) => createVertexDriver(name, pc, rt),
};

