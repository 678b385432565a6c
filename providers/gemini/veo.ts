// Veo on the Gemini API (reference §4.6): models/{m}:predictLongRunning -> {name: operation}; poll GET
// {root}/{name} until done; the video URI is downloaded with the API key only when it is on the API's own origin,
// and from anywhere else only through the client-URL guard (providers/upstream-json.ts download).
// An https image_url seed is fetched and inlined (the Gemini API takes bytes, not URLs), through the client-URL
// fetcher: never from an internal address, size- and time-capped, refused as a 400 naming the field, as is a URL
// that serves something other than an image (providers/client-media.ts).
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { knobs, nextDelay, unpricedKnob, type VideosCall, type VideosOutput } from "../../core/contracts/media.ts";
import { download, pause, pollWithRetry } from "../upstream-json.ts";
import { fetchClientMedia, IMAGE_TYPES } from "../client-media.ts";
import { geminiHeaders, geminiUrl } from "./request.ts";
import { apiRoot, geminiJson } from "./media-http.ts";
import type { GeminiEnv } from "./env.ts";
import { DEFAULT_URL_FETCH } from "../../core/net/url-fetch.ts";

const SIZES: Record<string, Record<string, string>> = {
  "720p": { "16:9": "1280x720", "9:16": "720x1280" },
  "1080p": { "16:9": "1920x1080", "9:16": "1080x1920" },
  "4k": { "16:9": "3840x2160", "9:16": "2160x3840" },
};

async function inlineImage(call: VideosCall, url: string, field: string, signal: AbortSignal) {
  const { bytes, mimeType } = await fetchClientMedia(url, call.urlFetch ?? DEFAULT_URL_FETCH, { field, signal, code: "BAD_REQUEST", types: IMAGE_TYPES, what: "an image" });
  return { bytesBase64Encoded: Buffer.from(bytes).toString("base64"), mimeType };
}

/**
 * Veo parameters that change the bill: the catalog prices (and the budget reserves) one video of the request's
 * duration at 720p or 1080p; more samples, another length or 4k would be billed by Google beyond that.
 */
function checkBilledKnobs(own: Record<string, any>, call: VideosCall, provider: string): void {
  for (const k of ["sampleCount", "numberOfVideos"]) {
    if (own[k] !== undefined && own[k] !== 1) throw unpricedKnob(provider, k, "the gateway returns and bills one video per request; send one request per video");
  }
  if (own.durationSeconds !== undefined && Number(own.durationSeconds) !== call.duration) {
    throw unpricedKnob(provider, "durationSeconds", `set the request's duration instead (this request is generated and billed for ${call.duration} s)`);
  }
  if (own.resolution !== undefined && !["720p", "1080p"].includes(String(own.resolution).toLowerCase())) {
    throw unpricedKnob(provider, "resolution", `${String(own.resolution)} has no price in the catalog (720p or 1080p)`);
  }
}

export async function geminiVideos(env: GeminiEnv, call: VideosCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  const own = knobs(call, env.name);
  checkBilledKnobs(own, call, env.name);
  const aspectRatio = call.aspectRatio ?? "16:9";
  if (!SIZES["720p"]![aspectRatio]) {
    throw new GatewayError(400, "BAD_REQUEST", `aspect_ratio ${aspectRatio} is not supported by Veo (16:9 or 9:16)`, { details: { field: "aspect_ratio" } });
  }
  const instance: Record<string, unknown> = { prompt: call.prompt };
  if (call.imageUrl) instance.image = await inlineImage(call, call.imageUrl, "image_url", opts.signal);
  if (call.lastFrameUrl) instance.lastFrame = await inlineImage(call, call.lastFrameUrl, "last_frame_url", opts.signal);
  const parameters: Record<string, unknown> = { sampleCount: 1, aspectRatio, durationSeconds: call.duration, ...own };
  const headers = geminiHeaders(env.config, target);
  const startUrl = geminiUrl(env.config, target, "predictLongRunning");
  let op = await geminiJson(env, { url: startUrl, headers, body: JSON.stringify({ instances: [instance], parameters }) }, opts.signal, target.timeoutMs);
  if (typeof op?.name !== "string") throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${env.name} did not return an operation`, { details: { provider: env.name } });
  const root = apiRoot(startUrl);
  const getHeaders = { ...headers };
  delete getHeaders["content-type"];

  for (let attempt = 0; op.done !== true; attempt++) {
    await pause(nextDelay(call.poll, attempt), opts.signal);
    op = await pollWithRetry(() => geminiJson(env, { url: `${root}/${op.name}`, method: "GET", headers: getHeaders }, opts.signal), opts.signal);
  }
  if (op.error) {
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${env.name} failed the video: ${op.error.message ?? op.error.status ?? "unknown error"}`, {
      retryable: false, details: { provider: env.name, upstream_error: op.error },
    });
  }
  const gen = op.response?.generateVideoResponse ?? op.response;
  const uri: string | undefined = gen?.generatedSamples?.[0]?.video?.uri ?? gen?.generatedVideos?.[0]?.video?.uri;
  if (!uri) {
    const reasons: string[] = gen?.raiMediaFilteredReasons ?? [];
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${env.name} returned no video${reasons.length ? `: ${reasons.join("; ")}` : ""}`, {
      retryable: false, details: { provider: env.name, reason: reasons.length ? "content_filter" : "empty" },
    });
  }
  // The key goes only to the API's own origin (a signed storage URL must not receive it); a URI or redirect off that
  // origin goes through the client-URL guard: public addresses only, server.url_fetch.allow_hosts honoured.
  const file = await download(env.client, env.name, uri, { origin: startUrl, headers: getHeaders, urlFetch: call.urlFetch, signal: opts.signal });
  const resolution = String(own.resolution ?? "720p").toLowerCase();
  const out: VideosOutput = {
    bytes: file.bytes,
    contentType: file.contentType?.startsWith("video/") ? file.contentType : "video/mp4",
    duration: call.duration,
    size: SIZES[resolution]?.[aspectRatio] ?? SIZES["720p"]![aspectRatio]!,
  };
  return { kind: "json", body: out };
}
