// The model a Gemini URL names (`/v1beta/models/{model}:generateContent`). Gateway ids are `<creator>/<slug>`: the
// Gemini SDKs put them in the path as they are (@google/genai's tModel only prefixes `models/`, so the slash goes raw),
// other clients encode the slash (%2F); both are accepted. A bare slug (`gemini-2.5-flash`, what Gemini CLI uses for
// its own helper calls) names the one catalog model with that slug, and is a 400 listing the candidates when several
// creators have it. Anything else is left to the router, whose 404 names the catalog.
import { GatewayError, invalidRequest } from "../../errors.ts";
import type { ModelRuntime } from "../../config/runtime.ts";

const bySlug = new WeakMap<Map<string, ModelRuntime>, Map<string, string[]>>();

function slugIndex(models: Map<string, ModelRuntime>): Map<string, string[]> {
  let index = bySlug.get(models);
  if (!index) {
    index = new Map();
    for (const id of models.keys()) {
      const slug = id.slice(id.indexOf("/") + 1);
      index.set(slug, [...(index.get(slug) ?? []), id]);
    }
    bySlug.set(models, index);
  }
  return index;
}

export function resolveGeminiModel(raw: string, models: Map<string, ModelRuntime>): string {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw invalidRequest(`The model name in the URL is not valid percent-encoding: ${JSON.stringify(raw.slice(0, 200))}`, "model");
  }
  if (name.startsWith("models/")) name = name.slice("models/".length);
  if (!name) throw invalidRequest("The URL names no model: use /v1beta/models/{creator}/{slug}:{method}", "model");
  if (name.includes("/") || models.has(name)) return name;
  const ids = slugIndex(models).get(name) ?? [];
  if (ids.length > 1) {
    throw new GatewayError(400, "INVALID_REQUEST", `Model "${name}" is ambiguous: use one of ${ids.join(", ")}`, { details: { field: "model", candidates: ids } });
  }
  return ids[0] ?? name;
}

/**
 * Whether a model named in the body (embedContent's `model`, countTokens' generateContentRequest.model) is the URL's.
 * Clients prefix `models/` to what they were given, which may have it already: @ai-sdk/google's
 * textEmbedding("models/openai/x") sends `models/models/openai/x`. Every `models/` prefix is dropped first.
 */
export function isUrlModel(given: string, url: string, models: Map<string, ModelRuntime>): boolean {
  let name = given;
  while (name.startsWith("models/models/")) name = name.slice("models/".length);
  return resolveGeminiModel(name, models) === url;
}
