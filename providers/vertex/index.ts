// Provider `vertex`: Google Vertex AI in front of two model families, chosen per target (upstreamFor): Gemini
// (publisher google, the Gemini protocol: chat, messages and responses clients through the gemini translators) and
// Claude (publisher anthropic, the Messages protocol: messages clients native, chat/responses translated).
// Authentication: a service-account key exchanged for access tokens (auth.ts), or an access token as api_key.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { GatewayError } from "../../core/errors.ts";
import { UpstreamClient } from "../http.ts";
import { createVertexAuth, type VertexAuth } from "./auth.ts";
import type { VertexEnv } from "./env.ts";
import { vertexGenerate } from "./gemini.ts";
import { betaHeader, vertexMessages } from "./claude.ts";
import { headersOpenLongContext } from "../codecs/anthropic-messages/long-context-beta.ts";
import { vertexCountGemini, vertexCountTokens } from "./count-tokens.ts";
import { vertexEmbeddings } from "./embeddings.ts";
import { publisherOf } from "./url.ts";

export const DEFAULT_LOCATION = "global";

export function createVertexDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver & { auth: VertexAuth } {
  const timeoutMs = config.timeout_ms ?? defaults.timeoutMs;
  const client = new UpstreamClient(name, { connections: config.connections, timeoutMs, answerTimeoutMs: defaults.answerTimeoutMs, limits: defaults.limits, egress: defaults.egress });
  const auth = createVertexAuth(name, config, timeoutMs, defaults.egress);
  const env: VertexEnv = { name, config, client, auth, location: config.region || DEFAULT_LOCATION };
  // The translators pick the op from upstreamFor; a model of the other family reaching an op is a catalog mistake.
  const family = (want: "google" | "anthropic", model: string) => {
    if (publisherOf(model) !== want) {
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${name}: model ${model} is not a ${want === "google" ? "Gemini" : "Claude"} model`, { retryable: false, details: { provider: name } });
    }
  };
  return {
    name,
    protocol: "vertex",
    auth,
    upstreamFor: (target) => (publisherOf(target.upstreamModel) === "anthropic" ? "messages" : "gemini"),
    messages: async (body, target, call) => {
      family("anthropic", target.upstreamModel);
      return vertexMessages(env, body, target, call);
    },
    generateContent: async (body, target, call) => {
      family("google", target.upstreamModel);
      return vertexGenerate(env, body, target, call, false);
    },
    streamGenerateContent: async (body, target, call) => {
      family("google", target.upstreamModel);
      return vertexGenerate(env, body, target, call, true);
    },
    // Claude's headers as vertexSend builds them: the provider's configured ones, the client's beta over them.
    opensLongContext: (target, sent) => publisherOf(target.upstreamModel) === "anthropic" && headersOpenLongContext({ ...config.headers, ...betaHeader(sent, config.headers) }),
    countTokens: (body, target, call) => vertexCountTokens(env, body, target, call),
    countGeminiTokens: async (body, target, call) => {
      family("google", target.upstreamModel);
      return vertexCountGemini(env, body, target, call);
    },
    embeddings: async (body, target, call) => {
      family("google", target.upstreamModel);
      return vertexEmbeddings(env, body, target, call);
    },
    close: async () => {
      await Promise.all([client.close(), auth.close()]);
    },
  };
}
