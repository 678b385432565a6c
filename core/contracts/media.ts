// Canonical driver input/output for the non-chat operations (embeddings, rerank, images, videos).
// The endpoint layer (core/endpoints/*) validates and normalises the client's body into these calls and turns
// the outputs into the public wire shapes, so every driver only translates to and from its own upstream.
import type { UrlFetchOptions } from "../net/url-fetch.ts";
import { GatewayError } from "../errors.ts";

export interface MediaCallBase {
  user?: string;
  /** The request's providerOptions (drivers read their own namespace, see knobs()). */
  providerOptions?: Record<string, any>;
  /** Fields the gateway does not know: forwarded to native (OpenAI-protocol) upstreams, dropped elsewhere. */
  extra: Record<string, unknown>;
}

export interface EmbeddingsCall extends MediaCallBase {
  /** Strings, or token-id arrays (OpenAI-protocol upstreams only). */
  input: string[] | number[][];
  /** Output size to ask the upstream for natively (absent: the model's own). */
  dimensions?: number;
  /** The catalog's native size, for upstreams (the simulator) that need to be told. */
  modelDimensions?: number;
  /** The client asked for base64: OpenAI-protocol upstreams are asked for it too (fewer bytes); else floats. */
  base64?: boolean;
}
export interface EmbeddingsOutput {
  /** One vector per input, in input order. */
  vectors: ArrayLike<number>[];
  inputTokens: number;
}

export interface RerankCall extends MediaCallBase {
  query: string;
  documents: string[];
  topN?: number;
}
export interface RerankOutput {
  /** Scores for (a subset of) documents; index is the caller's document position. */
  results: { index: number; score: number }[];
  inputTokens?: number;
}

export interface ImagesCall extends MediaCallBase {
  prompt: string;
  n: number;
  /** server.url_fetch: how a driver may download an image the upstream answered with a URL off its own origin. */
  urlFetch?: UrlFetchOptions;
  size?: string;
  quality?: string;
  style?: string;
  referenceImage?: string;
}
export interface GeneratedImage {
  bytes: Uint8Array;
  contentType: string;
  /** Only when the upstream rewrote the prompt. */
  revisedPrompt?: string;
}
export interface ImagesOutput {
  images: GeneratedImage[];
  inputTokens?: number;
  /** Of inputTokens, those of input images (a reference image), when the upstream tells. */
  inputImageTokens?: number;
  outputTokens?: number;
}

export interface PollPolicy {
  /** First wait between status polls. */
  initialMs: number;
  /** Backoff ceiling. */
  maxMs: number;
}
export interface VideosCall extends MediaCallBase {
  prompt: string;
  imageUrl?: string;
  lastFrameUrl?: string;
  /** server.url_fetch: how a driver that needs the seed's bytes may download it (core/net/url-fetch.ts). */
  urlFetch?: UrlFetchOptions;
  aspectRatio?: string;
  /** Seconds, already clamped to what the model supports. */
  duration: number;
  poll: PollPolicy;
}
export interface VideosOutput {
  bytes: Uint8Array;
  contentType: string;
  /** Final clip seconds. */
  duration: number;
  /** WIDTHxHEIGHT. */
  size: string;
  inputTokens?: number;
}

/** providerOptions.<provider> of this request (empty when absent). */
export function knobs(call: MediaCallBase, provider: string): Record<string, any> {
  const k = call.providerOptions?.[provider];
  return k && typeof k === "object" && !Array.isArray(k) ? k : {};
}

/**
 * A providerOptions knob that would change what the provider bills beyond what the gateway prices and reserves
 * (more samples, longer or larger output): a 400 naming the field, before any upstream call.
 */
export function unpricedKnob(provider: string, knob: string, why: string): GatewayError {
  const field = `providerOptions.${provider}.${knob}`;
  return new GatewayError(400, "BAD_REQUEST", `${field}: ${why}`, { details: { field, reason: "unpriced_provider_option" } });
}

/** Wait for the next poll: exponential from initialMs to maxMs, cut short by abort. */
export function nextDelay(policy: PollPolicy, attempt: number, hintMs?: number): number {
  if (hintMs !== undefined && Number.isFinite(hintMs) && hintMs > 0) return Math.min(hintMs, policy.maxMs);
  return Math.min(policy.maxMs, Math.round(policy.initialMs * 1.5 ** attempt));
}
