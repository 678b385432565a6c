// Gemini on Vertex: the Gemini API's body and answers (the chat/messages/responses -> gemini translators apply
// unchanged), sent to publishers/google/models/{m}:generateContent or :streamGenerateContent?alt=sse.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { geminiAnswer } from "../codecs/gemini/answer.ts";
import type { VertexEnv } from "./env.ts";
import { vertexSend } from "./send.ts";

export async function vertexGenerate(env: VertexEnv, body: any, target: Target, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  const res = stream
    ? await vertexSend(env, target, call, { method: "streamGenerateContent", query: "?alt=sse", body: JSON.stringify(body) })
    : await vertexSend(env, target, call, { method: "generateContent", body: JSON.stringify(body) });
  return geminiAnswer(env.name, res, call, stream);
}
