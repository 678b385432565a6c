// Provider `gemini`: the Gemini API (generateContent / streamGenerateContent?alt=sse, x-goog-api-key).
// A small driver object: each op lives in its own file and takes the shared GeminiEnv. It speaks only Gemini: chat
// and messages clients reach generateContent through providers/translate/ (chat-to-gemini, messages-to-gemini).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { UpstreamClient } from "../http.ts";
import { geminiGenerate } from "./generate.ts";
import { geminiEmbeddings } from "./embeddings.ts";
import { geminiImages } from "./imagen.ts";
import { geminiVideos } from "./veo.ts";
import { geminiCountNative, geminiCountTokens } from "./count-tokens.ts";
import type { GeminiEnv } from "./env.ts";

export type { GeminiEnv } from "./env.ts";

export function createGeminiDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver & { env: GeminiEnv } {
  const client = new UpstreamClient(name, { connections: config.connections, timeoutMs: config.timeout_ms ?? defaults.timeoutMs, answerTimeoutMs: defaults.answerTimeoutMs, limits: defaults.limits, egress: defaults.egress });
  const env: GeminiEnv = { name, config, client };
  return {
    name,
    protocol: "gemini",
    env,
    generateContent: (body, target, call) => geminiGenerate(env, body, target, call, false),
    streamGenerateContent: (body, target, call) => geminiGenerate(env, body, target, call, true),
    countTokens: (body, target, call) => geminiCountTokens(env, body, target, call),
    countGeminiTokens: (body, target, call) => geminiCountNative(env, body, target, call),
    embeddings: (body, target, call) => geminiEmbeddings(env, body, target, call),
    images: (body, target, call) => geminiImages(env, body, target, call),
    videos: (body, target, call) => geminiVideos(env, body, target, call),
    close: () => client.close(),
  };
}
