// Image generation on an OpenAI-protocol upstream (gpt-image and dall-e families). dall-e is asked for b64_json
// (gpt-image always returns it); a URL answer is downloaded here, so upstream URLs never reach the client.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { UpstreamClient } from "../http.ts";
import type { GeneratedImage, ImagesCall, ImagesOutput } from "../../core/contracts/media.ts";
import { download, sendJson, sniffImage } from "../upstream-json.ts";
import { authHeaders, endpointUrl } from "./request.ts";

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
  const { json } = await sendJson(client, name, { url: endpointUrl(config, target, "/images/generations"), headers: authHeaders(config, target), body: JSON.stringify(body) }, opts.signal, target.timeoutMs);
  const format = typeof json?.output_format === "string" ? json.output_format : undefined;
  const images: GeneratedImage[] = await Promise.all((json?.data ?? []).map(async (d: any): Promise<GeneratedImage> => {
    let bytes: Uint8Array;
    if (typeof d.b64_json === "string") bytes = Buffer.from(d.b64_json, "base64");
    else if (typeof d.url === "string") bytes = (await download(client, name, d.url, {}, opts.signal, target.timeoutMs)).bytes;
    else throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${name} returned an image without data`, { details: { provider: name } });
    const img: GeneratedImage = { bytes, contentType: sniffImage(bytes, format ? `image/${format === "jpg" ? "jpeg" : format}` : "image/png") };
    if (typeof d.revised_prompt === "string" && d.revised_prompt) img.revisedPrompt = d.revised_prompt;
    return img;
  }));
  const usage = json?.usage;
  const out: ImagesOutput = { images, inputTokens: usage?.input_tokens, inputImageTokens: usage?.input_tokens_details?.image_tokens, outputTokens: usage?.output_tokens };
  return { kind: "json", body: out };
}
