// count_tokens on Vertex. Claude: publishers/anthropic/models/count-tokens:rawPredict with the Messages body, its
// `model` kept and anthropic_version added (as Anthropic's Vertex SDK sends it). Gemini: the model's :countTokens
// with contents, systemInstruction and tools at the top level (Vertex has no generateContentRequest wrapper), a
// Gemini client's own request (vertexCountGemini) with its generationConfig too.
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { countTokensBody } from "../codecs/anthropic-messages/count-tokens.ts";
import { messagesAsGeminiRequest } from "../translate/messages-to-gemini/count-request.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";
import { countResult } from "../count-result.ts";
import { betaHeader, VERTEX_ANTHROPIC_VERSION } from "./claude.ts";
import type { VertexEnv } from "./env.ts";
import { vertexSend } from "./send.ts";
import { publisherOf } from "./url.ts";
import { bodyJson } from "../upstream-json.ts";

export async function vertexCountTokens(env: VertexEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const claude = publisherOf(target.upstreamModel) === "anthropic";
  const res = claude
    ? await vertexSend(env, target, call, {
      method: "rawPredict",
      headers: betaHeader(call, env.config.headers),
      resource: { publisher: "anthropic", model: "count-tokens" },
      body: JSON.stringify({ ...countTokensBody(body, { ...target, upstreamModel: target.upstreamModel.replace(/^publishers\/[^/]+\/models\//, "") }), anthropic_version: VERTEX_ANTHROPIC_VERSION }),
    })
    : await vertexSend(env, target, call, { method: "countTokens", body: JSON.stringify(geminiCountBody(body, target)) });
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  const json = await bodyJson(env.name, res, call.signal);
  return claude
    ? countResult(env.name, json?.input_tokens, "upstream", json && typeof json === "object" ? json : {})
    : countResult(env.name, json?.totalTokens, "upstream");
}

/** A Gemini client's own request (its generateContent body, as the native pair passes it through) in the fields Vertex's countTokens has. */
export async function vertexCountGemini(env: VertexEnv, body: Record<string, unknown>, target: Target, call: CallOptions): Promise<ProviderResult> {
  const out: Record<string, unknown> = {};
  for (const k of VERTEX_COUNT_FIELDS) if (body[k] !== undefined) out[k] = body[k];
  const res = await vertexSend(env, target, call, { method: "countTokens", body: JSON.stringify(out) });
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  return countResult(env.name, (await bodyJson(env.name, res, call.signal))?.totalTokens, "upstream");
}

/** Vertex's CountTokensRequest: the rest of a generateContent body (safetySettings, toolConfig, cachedContent) is refused there. */
const VERTEX_COUNT_FIELDS = ["contents", "systemInstruction", "tools", "generationConfig"];

function geminiCountBody(body: any, target: Target): Record<string, unknown> {
  const g = messagesAsGeminiRequest(body, target);
  const out: Record<string, unknown> = { contents: g.contents };
  for (const k of ["systemInstruction", "tools"]) if (g[k] !== undefined) out[k] = g[k];
  return out;
}
