// The gemini driver's native ops: a Gemini generateContent body in, Gemini's own JSON or SSE events out (read by
// the Gemini codec, providers/codecs/gemini). Chat and messages clients reach them through providers/translate/
// (chat-to-gemini, messages-to-gemini).
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { geminiAnswer } from "../codecs/gemini/answer.ts";
import { geminiRequest } from "./request.ts";
import type { GeminiEnv } from "./env.ts";

export async function geminiGenerate(env: GeminiEnv, body: any, target: Target, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  const req = stream
    ? geminiRequest(env.config, target, "streamGenerateContent", body, "?alt=sse")
    : geminiRequest(env.config, target, "generateContent", body);
  return geminiAnswer(env.name, await env.client.send(req, call.signal, target.timeoutMs), call, stream);
}
