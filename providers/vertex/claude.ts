// Claude on Vertex (reference protocols-2 §3.3): the Messages body without `model` (it is in the URL) and with
// anthropic_version "vertex-2023-10-16" in the body, to publishers/anthropic/models/{m}:rawPredict or
// :streamRawPredict (the same SSE events as Anthropic's). anthropic-beta stays a header. Answers, usage and
// errors are read by the Messages codec (providers/codecs/anthropic-messages); Google's front end may answer with
// its own error envelope.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { messagesBody } from "../codecs/anthropic-messages/request.ts";
import { refuseThread } from "../codecs/anthropic-messages/thread.ts";
import { mergedBetaHeader } from "../codecs/anthropic-messages/betas.ts";
import { messagesAnswer } from "../codecs/anthropic-messages/answer.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";
import type { VertexEnv } from "./env.ts";
import { vertexSend } from "./send.ts";

export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

export function vertexClaudeBody(body: Record<string, any>, target: Target, provider: string): Record<string, unknown> {
  refuseThread(body); // Vertex keeps no threads and refuses the key: the SDK's threads go on unthreaded on this 400
  const out = messagesBody(body, target, provider);
  delete out.model;
  delete out.thread; // a null one (any other is refused): Vertex refuses the key
  out.anthropic_version = VERTEX_ANTHROPIC_VERSION;
  return out;
}

/** anthropic-beta stays a header on Vertex: the client's betas added to the configured ones (a translated call has none). */
export function betaHeader(call: Pick<CallOptions, "clientHeaders">, configured: Record<string, string> | undefined): Record<string, string> {
  return mergedBetaHeader(configured, call.clientHeaders["anthropic-beta"]);
}

export async function vertexMessages(env: VertexEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const stream = body.stream === true;
  const res = await vertexSend(env, target, call, { method: stream ? "streamRawPredict" : "rawPredict", body: JSON.stringify(vertexClaudeBody(body, target, env.name)), headers: betaHeader(call, env.config.headers) });
  // geminiFailure reads both shapes (error.message) and adds Google's RetryInfo as Retry-After.
  return messagesAnswer(env.name, res, stream, call, geminiFailure);
}
