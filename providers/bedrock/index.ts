// Provider `bedrock`: AWS Bedrock Runtime. Two upstream protocols behind one driver, chosen per target
// (upstreamFor): Claude models (anthropic.* ids, inference profiles included) go through InvokeModel with the
// Anthropic body — Messages clients are native there, prompt caching included — unless the provider sets
// `bedrock_claude_api: converse`; every other model (Llama, Nova, Mistral, …) through Converse / ConverseStream,
// reached by chat, messages and responses clients through providers/translate/*-to-converse. Embeddings: Titan and
// Cohere Embed through InvokeModel (embeddings.ts).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, Target, UpstreamProtocol } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { UpstreamClient } from "../http.ts";
import { createBedrockAuth } from "./auth.ts";
import { converse } from "./converse.ts";
import { invokeBetas, invokeMessages } from "./invoke.ts";
import { converseBetas } from "./betas.ts";
import { namesLongContextBeta } from "../codecs/anthropic-messages/long-context-beta.ts";
import { bedrockEmbeddings } from "./embeddings.ts";
import type { BedrockEnv } from "./env.ts";

/** `anthropic.claude-…`, `us.anthropic.claude-…`, `global.…`, or an ARN naming one. */
export const isClaudeModel = (id: string) => /(^|[./])anthropic\.claude/.test(id);

export function createBedrockDriver(
  name: string, config: ProviderConfig, defaults: DriverSettings, processEnv: Record<string, string | undefined> = process.env,
): ProviderDriver & { env: BedrockEnv } {
  const client = new UpstreamClient(name, { connections: config.connections, timeoutMs: config.timeout_ms ?? defaults.timeoutMs, answerTimeoutMs: defaults.answerTimeoutMs, limits: defaults.limits, egress: defaults.egress });
  const env: BedrockEnv = { name, config, client, auth: createBedrockAuth(name, config, processEnv) };
  const invokeClaude = (config.bedrock_claude_api ?? "invoke") === "invoke";
  return {
    name,
    protocol: "bedrock",
    env,
    converse: (body, target, call) => converse(env, body, target, call, false),
    converseStream: (body, target, call) => converse(env, body, target, call, true),
    messages: (body, target, call) => invokeMessages(env, body, target, call),
    embeddings: (body, target, call) => bedrockEmbeddings(env, body, target, call),
    upstreamFor: (target: Target): UpstreamProtocol => (invokeClaude && isClaudeModel(target.upstreamModel) ? "messages" : "converse"),
    // Bedrock reads betas from the body alone: InvokeModel's anthropic_beta (the client's field, the configured header's
    // betas and the client's), Converse's additionalModelRequestFields.anthropic_beta (the configured header's betas).
    // A translated call (chat, Responses, Gemini) carries no client headers, as on Anthropic: stream-transcoder sends
    // it none and core asks with none, so the call and its billing agree.
    opensLongContext: (target, sent) => isClaudeModel(target.upstreamModel) && namesLongContextBeta(invokeClaude
      ? invokeBetas(sent.body ?? {}, sent.clientHeaders, config.headers).list
      : converseBetas(sent.body ?? {}, target.upstreamModel, config.headers)),
    close: () => client.close(),
  };
}
