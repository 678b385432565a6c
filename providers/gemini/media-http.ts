// JSON round trips for the Gemini media ops (embeddings, Imagen, Veo) with Gemini's error mapping.
import { readUpstreamJson, type UpstreamRequest } from "../http.ts";
import type { GeminiEnv } from "./env.ts";
import { geminiFailure } from "../codecs/gemini/errors.ts";

export async function geminiJson(env: GeminiEnv, req: UpstreamRequest, signal: AbortSignal, timeoutMs?: number): Promise<any> {
  const res = await env.client.send(req, signal, timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  return readUpstreamJson(env.name, res, signal, "media");
}

/** `{base}/v1beta` of a target (where operation names are resolved). */
export function apiRoot(url: string): string {
  return url.slice(0, url.indexOf("/models/"));
}
