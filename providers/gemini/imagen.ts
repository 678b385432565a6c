// Imagen on the Gemini API: models/{m}:predict {instances:[{prompt}], parameters:{sampleCount, aspectRatio, …}}
// -> {predictions:[{bytesBase64Encoded, mimeType, prompt?}]}. A returned `prompt` is Imagen's rewritten prompt
// (enhancePrompt). Samples withheld by the safety filter come back as raiFilteredReason and are dropped.
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { knobs, unpricedKnob, type GeneratedImage, type ImagesCall, type ImagesOutput } from "../../core/contracts/media.ts";
import { sniffImage } from "../upstream-json.ts";
import { decodeBase64Strict } from "../strict-base64.ts";
import { invalidAnswer } from "../../core/invalid-answer.ts";
import { geminiRequest } from "./request.ts";
import { geminiJson } from "./media-http.ts";
import type { GeminiEnv } from "./env.ts";

const RATIOS: [string, number][] = [["1:1", 1], ["3:4", 3 / 4], ["4:3", 4 / 3], ["9:16", 9 / 16], ["16:9", 16 / 9]];

/** WIDTHxHEIGHT -> Imagen's nearest aspect ratio (and 2K for large sizes). */
export function imagenShape(size: string | undefined): { aspectRatio?: string; imageSize?: string } {
  const m = size ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!m) return {};
  const w = Number(m[1]);
  const h = Number(m[2]);
  const r = w / h;
  const aspectRatio = RATIOS.reduce((best, cur) => (Math.abs(Math.log(cur[1] / r)) < Math.abs(Math.log(best[1] / r)) ? cur : best))[0];
  return { aspectRatio, ...(Math.max(w, h) > 1536 ? { imageSize: "2K" } : {}) };
}

export async function geminiImages(env: GeminiEnv, call: ImagesCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  if (call.referenceImage !== undefined) {
    throw new GatewayError(400, "BAD_REQUEST", `reference_image is not supported by Imagen through provider ${env.name}`, { details: { field: "reference_image" } });
  }
  const own = knobs(call, env.name);
  // The budget reserved n images: a sample count of its own would be generated and billed beyond that.
  for (const k of ["sampleCount", "numberOfImages"]) {
    if (own[k] !== undefined && own[k] !== call.n) throw unpricedKnob(env.name, k, `set n instead (this request reserves and bills ${call.n} image${call.n === 1 ? "" : "s"})`);
  }
  const parameters: Record<string, unknown> = { sampleCount: call.n, ...imagenShape(call.size), ...own };
  const json = await geminiJson(env, geminiRequest(env.config, target, "predict", { instances: [{ prompt: call.prompt }], parameters }), opts.signal, target.timeoutMs);
  const predictions: any[] = Array.isArray(json?.predictions) ? json.predictions : [];
  const images: GeneratedImage[] = predictions.filter((p) => typeof p?.bytesBase64Encoded === "string").map((p) => {
    const bytes = decodeBase64Strict(p.bytesBase64Encoded);
    if (!bytes) throw invalidAnswer(env.name, `Provider ${env.name} returned an image whose bytesBase64Encoded is not base64`);
    const img: GeneratedImage = { bytes, contentType: sniffImage(bytes, p.mimeType ?? "image/png") };
    if (typeof p.prompt === "string" && p.prompt && p.prompt !== call.prompt) img.revisedPrompt = p.prompt;
    return img;
  });
  if (!images.length) {
    const reasons = predictions.map((p) => p?.raiFilteredReason).filter(Boolean);
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${env.name} returned no images${reasons.length ? `: ${reasons.join("; ")}` : ""}`, {
      retryable: false, details: { provider: env.name, reason: reasons.length ? "content_filter" : "empty" },
    });
  }
  const out: ImagesOutput = { images };
  return { kind: "json", body: out };
}
