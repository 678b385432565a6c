// Catalog entries and a config builder shared by the embeddings / rerank / images / videos e2e tests.
import { keyEntry, testKey } from "./gateway.ts";

export const LIVE = testKey("media");
export const SANDBOX = testKey("mediasbx", true);
export const OTHER = testKey("mediaoth");

/** Fast simulator and fast video polling, so tests never wait on realistic delays. */
export const FAST_SIM = { embedding_ms: 1, rerank_ms: 1, image_ms: 5, video_ms: 200 };

export function mediaModels(): Record<string, any> {
  return {
    "openai/text-embedding-3-small": {
      type: "embedding", context_window: 8191, dimensions: 1536, limits: { dimensions: "native" },
      endpoints: [{ provider: "openai", model: "text-embedding-3-small", pricing: { input: "0.00000002" } }],
    },
    "acme/matryoshka-embed": {
      type: "embedding", context_window: 512, dimensions: 768, limits: { dimensions: "truncate", min_dimensions: 64 },
      endpoints: [{ provider: "openai", model: "acme-embed", pricing: { input: "0.00000001" } }],
    },
    "acme/fixed-embed": {
      type: "embedding", context_window: 512, dimensions: 384, limits: { dimensions_supported: false },
      endpoints: [{ provider: "openai", model: "fixed-embed" }],
    },
    "openai/gpt-4o-mini": {
      type: "language", context_window: 128000,
      endpoints: [{ provider: "openai", model: "gpt-4o-mini" }],
    },
    "openai/gpt-image-1": {
      type: "image", limits: { max_images: 8, sizes: ["1024x1024", "1536x1024", "1024x1536", "auto"] },
      endpoints: [{ provider: "openai", model: "gpt-image-1", pricing: { input: "0.000005", image: "0.04" } }],
    },
    "openai/dall-e-3": {
      type: "image", limits: { max_images: 1, sizes: ["1024x1024", "1792x1024", "1024x1792"] },
      endpoints: [{ provider: "openai", model: "dall-e-3", pricing: { image: "0.04" } }],
    },
    "sim/pixel": {
      type: "image", limits: { max_images: 4, reference_image: true },
      endpoints: [{ provider: "sim", model: "pixel" }],
    },
    "sim/reel": {
      type: "video", limits: { durations: [2, 4], aspect_ratios: ["16:9", "9:16", "1:1"], max_concurrent_jobs: 1, last_frame: true },
      endpoints: [{ provider: "sim", model: "reel", pricing: { video_second: "0.1" } }],
    },
    "sim/ranker": {
      type: "reranking",
      endpoints: [{ provider: "sim", model: "ranker", pricing: { search_unit: "0.002" } }],
    },
    "sim/embed": {
      type: "embedding", context_window: 512, dimensions: 256, limits: { dimensions: "truncate" },
      endpoints: [{ provider: "sim", model: "embed" }],
    },
  };
}

export function mediaConfig(opts: { providers?: Record<string, any>; models?: Record<string, any>; sim?: Record<string, unknown>; server?: Record<string, unknown> } = {}) {
  return {
    server: { signing_secret: "test-signing-secret", ...opts.server },
    providers: { sim: { protocol: "sim", sim: { ...FAST_SIM, ...opts.sim } }, openai: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-x" }, ...opts.providers },
    models: { ...mediaModels(), ...opts.models },
    projects: {
      media: { keys: [keyEntry("live", LIVE), keyEntry("sandbox", SANDBOX)] },
      other: { keys: [keyEntry("other", OTHER)] },
    },
  };
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

export const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));
