// Image generation on an OpenAI-protocol upstream (gpt-image and dall-e families). dall-e is asked for b64_json
// (gpt-image always returns it); a URL answer is downloaded here, so upstream URLs never reach the client: on the
// provider's own origin directly, anywhere else only through the client-URL guard (providers/upstream-json.ts).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { UpstreamClient } from "../http.ts";
import type { GeneratedImage, ImagesCall, ImagesOutput } from "../../core/contracts/media.ts";
import { download, sendJson, sniffImage } from "../upstream-json.ts";
import { authHeaders, endpointUrl } from "./request.ts";
import { idHeaders } from "../upstream-request-id.ts";
import { invalidAnswer } from "../../core/invalid-answer.ts";
import { decodeBase64Strict } from "../strict-base64.ts";

export async function openaiImages(client: UpstreamClient, config: ProviderConfig, name: string, call: ImagesCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  if (call.referenceImage !== undefined) {
    throw new GatewayError(400, "BAD_REQUEST", `reference_image is not supported through provider ${name} (OpenAI edits take multipart uploads)`, { details: { field: "reference_image" } });
  }
  const body: Record<string, unknown> = { ...call.extra, model: target.upstreamModel, prompt: call.prompt, n: call.n };
  for (const [k, v] of [["size", call.size], ["quality", call.quality], ["style", call.style], ["user", call.user]] as const) if (v !== undefined) body[k] = v;
  if (/^dall-e/i.test(target.upstreamModel)) body.response_format = "b64_json";
  // The gateway answers with one JSON body: partial-image streaming is not relayed.
  delete body.stream;
  delete body.partial_images;
  const url = endpointUrl(config, target, "/images/generations");
  const { json, headers } = await sendJson(client, name, { url, headers: authHeaders(config, target), body: JSON.stringify(body) }, opts.signal, target.timeoutMs);
  // A URL answer is fetched directly only on the origin this request went to; anywhere else through the client-URL
  // guard (public addresses only), so an upstream cannot have the gateway read an internal service for it. ImagesCall
  // carries no server.url_fetch yet (core/endpoints/images.ts): until it does, allow_hosts is not applied here.
  const fetchOpts = { origin: url, urlFetch: call.urlFetch, signal: opts.signal, timeoutMs: target.timeoutMs };
  const format = typeof json?.output_format === "string" ? json.output_format : undefined;
  const data: unknown = json?.data;
  const images: GeneratedImage[] = await Promise.all((Array.isArray(data) ? data : []).map(async (d: any): Promise<GeneratedImage> => {
    let bytes: Uint8Array;
    if (typeof d?.b64_json === "string") bytes = decodeBase64Strict(d.b64_json) ?? badImage(name);
    else if (typeof d?.url === "string") bytes = (await download(client, name, d.url, fetchOpts)).bytes;
    else throw invalidAnswer(name, `Provider ${name} returned an image without data`);
    const img: GeneratedImage = { bytes, contentType: sniffImage(bytes, format ? `image/${format === "jpg" ? "jpeg" : format}` : "image/png") };
    if (typeof d.revised_prompt === "string" && d.revised_prompt) img.revisedPrompt = d.revised_prompt;
    return img;
  }));
  const usage = json?.usage;
  const out: ImagesOutput = { images, inputTokens: usage?.input_tokens, inputImageTokens: usage?.input_tokens_details?.image_tokens, outputTokens: usage?.output_tokens };
  return { kind: "json", body: out, headers: idHeaders(headers) };
}

const badImage = (name: string): never => {
  throw invalidAnswer(name, `Provider ${name} returned an image whose b64_json is not base64`);
};
