// Vertex AI addressing (reference protocols-2 §3.1): the host follows the location (regional, `global`, or the
// `us` / `eu` multi-regions), the path names project, location, publisher and model. `base_url` replaces the host
// (private endpoints, tests).
import type { Target } from "../../core/contracts/provider.ts";

/** Who publishes a model on Vertex: Google (Gemini, the Gemini body) or Anthropic (Claude, the Messages body). */
export type Publisher = "google" | "anthropic";

/** Claude models are Anthropic's (`claude-sonnet-4-5@20250929`); everything else is Google's. */
export function publisherOf(upstreamModel: string): Publisher {
  return /^(publishers\/anthropic\/models\/)?claude/i.test(upstreamModel) ? "anthropic" : "google";
}

export function vertexHost(location: string): string {
  if (location === "global") return "https://aiplatform.googleapis.com";
  if (location === "us" || location === "eu") return `https://aiplatform.${location}.rep.googleapis.com`;
  return `https://${location}-aiplatform.googleapis.com`;
}

export interface VertexPlace {
  /** base_url from the config, when set: it replaces the host. */
  baseUrl?: string;
  project: string;
  location: string;
}

/**
 * `{host}/v1/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{method}{query}`. `resource` names
 * another model path than the target's own (Claude's token counter is publishers/anthropic/models/count-tokens).
 */
export function vertexUrl(place: VertexPlace, target: Pick<Target, "upstreamModel">, method: string, query = "", resource?: { publisher: Publisher; model: string }): string {
  const base = (place.baseUrl ?? vertexHost(place.location)).replace(/\/+$/, "");
  const root = /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`;
  const model = resource?.model ?? target.upstreamModel.replace(/^publishers\/[^/]+\/models\//, "");
  const publisher = resource?.publisher ?? publisherOf(target.upstreamModel);
  const path = `projects/${encodeURIComponent(place.project)}/locations/${encodeURIComponent(place.location)}/publishers/${publisher}/models/${model}`;
  return `${root}/${path}:${method}${query}`;
}
