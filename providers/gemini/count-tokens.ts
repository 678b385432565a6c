// Gemini's models/{model}:countTokens, always sent as a generateContentRequest so the system instruction and function
// declarations are counted too (plain `contents` would count only the turns). A Gemini client's own request goes as it
// came (geminiCountNative: media URIs, cachedContent, Google's tools and all, as generateContent takes them); a
// Messages request goes through the same translators a generation uses (messages -> chat -> Gemini), its
// generationConfig left out.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { messagesAsGeminiRequest } from "../translate/messages-to-gemini/count-request.ts";
import { countResult } from "../count-result.ts";
import { geminiRequest } from "./request.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";
import type { GeminiEnv } from "./env.ts";
import { bodyJson } from "../upstream-json.ts";

export function geminiCountTokens(env: GeminiEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const g = messagesAsGeminiRequest(body, target);
  const request: Record<string, unknown> = { contents: g.contents };
  for (const k of ["systemInstruction", "tools", "toolConfig"]) if (g[k] !== undefined) request[k] = g[k];
  return count(env, request, target, call);
}

/** A Gemini generateContent body (the client's, as the native pair passes it through), counted as it is. */
export function geminiCountNative(env: GeminiEnv, body: Record<string, unknown>, target: Target, call: CallOptions): Promise<ProviderResult> {
  return count(env, body, target, call);
}

async function count(env: GeminiEnv, request: Record<string, unknown>, target: Target, call: CallOptions): Promise<ProviderResult> {
  const model = target.upstreamModel.startsWith("models/") ? target.upstreamModel : `models/${target.upstreamModel}`;
  const generateContentRequest = { ...request, model };
  const res = await env.client.send(geminiRequest(env.config, target, "countTokens", { generateContentRequest }), call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  const json = await bodyJson(env.name, res, call.signal);
  return countResult(env.name, json?.totalTokens, "upstream");
}
