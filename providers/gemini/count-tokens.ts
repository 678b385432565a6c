// Gemini's models/{model}:countTokens. The Messages request goes through the same translators a generation uses
// (messages -> chat -> Gemini), and is sent as a generateContentRequest so the system instruction and function
// declarations are counted too (plain `contents` would count only the turns). generationConfig is left out.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { messagesAsGeminiRequest } from "../translate/messages-to-gemini/count-request.ts";
import { countResult } from "../count-result.ts";
import { geminiRequest } from "./request.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";
import type { GeminiEnv } from "./env.ts";
import { bodyJson } from "../upstream-json.ts";

export async function geminiCountTokens(env: GeminiEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const g = messagesAsGeminiRequest(body, target);
  const model = target.upstreamModel.startsWith("models/") ? target.upstreamModel : `models/${target.upstreamModel}`;
  const generateContentRequest: Record<string, unknown> = { model, contents: g.contents };
  for (const k of ["systemInstruction", "tools", "toolConfig"]) if (g[k] !== undefined) generateContentRequest[k] = g[k];
  const res = await env.client.send(geminiRequest(env.config, target, "countTokens", { generateContentRequest }), call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  const json = await bodyJson(env.name, res, call.signal);
  return countResult(env.name, json?.totalTokens, "upstream");
}
