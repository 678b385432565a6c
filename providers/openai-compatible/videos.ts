// Video generation on an OpenAI-protocol upstream (Sora, reference §4.5): create the job, poll it with
// backoff (honouring openai-poll-after-ms), then download /content. Runs under the job's own signal.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { UpstreamClient } from "../http.ts";
import { knobs, nextDelay, unpricedKnob, type VideosCall, type VideosOutput } from "../../core/contracts/media.ts";
import { download, pause, pollWithRetry, sendJson } from "../upstream-json.ts";
import { authHeaders, endpointUrl } from "./request.ts";

/** Aspect ratio -> Sora size. Other ratios are refused by the catalog's aspect_ratios before we get here. */
const SIZES: Record<string, string> = { "16:9": "1280x720", "9:16": "720x1280" };
const PRICED_SIZES = new Set(Object.values(SIZES));

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function openaiVideos(client: UpstreamClient, config: ProviderConfig, name: string, call: VideosCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  const own = knobs(call, name);
  const body: Record<string, unknown> = { ...call.extra, model: target.upstreamModel, prompt: call.prompt, seconds: String(call.duration) };
  // The catalog prices Sora per second at 720p: a larger size (from providerOptions or an unknown top-level field
  // passed through) is billed higher by OpenAI than the gateway would bill and reserve.
  const asked = own.size ?? call.extra.size;
  if (asked !== undefined && !PRICED_SIZES.has(String(asked))) {
    throw own.size !== undefined
      ? unpricedKnob(name, "size", `${String(asked)} has no price in the catalog (${[...PRICED_SIZES].join(" or ")}; or set aspect_ratio)`)
      : new GatewayError(400, "BAD_REQUEST", `size ${String(asked)} has no price in the catalog (${[...PRICED_SIZES].join(" or ")}; or set aspect_ratio)`, { details: { field: "size", reason: "unpriced_provider_option" } });
  }
  const size = asked ?? (call.aspectRatio ? SIZES[call.aspectRatio] : undefined);
  if (call.aspectRatio && !size) {
    throw new GatewayError(400, "BAD_REQUEST", `aspect_ratio ${call.aspectRatio} is not supported by provider ${name} (16:9 or 9:16)`, { details: { field: "aspect_ratio" } });
  }
  if (size) body.size = size;
  if (call.imageUrl) body.input_reference = { image_url: call.imageUrl };
  const headers = authHeaders(config, target);
  const created = await sendJson(client, name, { url: endpointUrl(config, target, "/videos"), headers, body: JSON.stringify(body) }, opts.signal, target.timeoutMs);
  let job = created.json;
  let hint = Number(header(created.headers, "openai-poll-after-ms"));
  if (typeof job?.id !== "string") throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${name} did not return a video job id`, { details: { provider: name } });
  const id = encodeURIComponent(job.id);
  const getHeaders = { ...headers };
  delete getHeaders["content-type"];

  for (let attempt = 0; job.status !== "completed"; attempt++) {
    if (job.status === "failed" || job.status === "cancelled") {
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${name} failed the video job: ${job.error?.message ?? job.status}`, {
        retryable: false, details: { provider: name, upstream_job: job.id, upstream_error: job.error ?? null },
      });
    }
    await pause(nextDelay(call.poll, attempt, hint), opts.signal);
    const polled = await pollWithRetry(() => sendJson(client, name, { url: endpointUrl(config, target, `/videos/${id}`), method: "GET", headers: getHeaders }, opts.signal), opts.signal);
    job = polled.json;
    hint = Number(header(polled.headers, "openai-poll-after-ms"));
  }
  // The content endpoint is on the provider's origin; a redirect off it (a storage URL) goes through the client-URL
  // guard: public addresses only, server.url_fetch.allow_hosts honoured, no credentials.
  const contentUrl = endpointUrl(config, target, `/videos/${id}/content?variant=video`).replace(/\?(.*)\?/, "?$1&");
  const content = await download(client, name, contentUrl, { origin: contentUrl, headers: { ...getHeaders, accept: "application/binary" }, urlFetch: call.urlFetch, signal: opts.signal });
  const out: VideosOutput = {
    bytes: content.bytes,
    contentType: content.contentType && content.contentType.startsWith("video/") ? content.contentType : "video/mp4",
    duration: Number(job.seconds) || call.duration,
    size: typeof job.size === "string" ? job.size : size ?? "1280x720",
  };
  return { kind: "json", body: out };
}
