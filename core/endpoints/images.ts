// POST /api/v1/images/generations: OpenAI-compatible. Catalog limits (n, sizes and qualities with a priced tier,
// reference images) are checked before any upstream call, and images are billed at their size and quality's price;
// images come back as b64_json (default) or as a gateway-served signed URL valid about an hour — upstream URLs and
// keys never reach the client.
import { ulid } from "ulid";
import { validateImages } from "../generated/validators.js";
import { dropNullFields } from "./null-fields.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";
import { servingTiers } from "./image-tier.ts";
import { pricingForTier } from "../money/image-price.ts";
import type { ImagesCall, ImagesOutput } from "../contracts/media.ts";
import { estimateTokens } from "../metering/estimate-tokens.ts";
import { keepAsset, signAsset, IMAGE_URL_TTL_S } from "../assets/index.ts";
import { IDEMPOTENCY_WINDOW_MS } from "../http/idempotency-key.ts";
import { refreshImageUrls } from "./image-replay.ts";
import { invalidAnswer } from "../invalid-answer.ts";
import { dispatchCall, extraFields, limitsOf, metadata, requireType, servedModelId, withDeadline, withTimeout, echoTraceId } from "./media.ts";

const KNOWN = ["model", "prompt", "n", "size", "quality", "style", "response_format", "user", "reference_image", "providerOptions"] as const;
/** Spec, Limits: image requests hold the connection up to 300 seconds. */
export const IMAGE_HOLD_MS = 300_000;

const bad = (message: string, field: string, extra: Record<string, unknown> = {}) =>
  new GatewayError(400, "BAD_REQUEST", message, { details: { field, ...extra } });

function checkLimits(ctx: GatewayContext): void {
  const body = ctx.body;
  const model = ctx.model!;
  const limits = limitsOf(model);
  if (body.stream === true) throw bad("Streaming image generation (partial images) is not supported: omit stream", "stream");
  const n = body.n ?? 1;
  const maxN = typeof limits.max_images === "number" ? limits.max_images : 8;
  if (n > maxN) throw bad(`n=${n} is more than ${model.id} allows per request (${maxN})`, "n", { max: maxN });
  if (body.reference_image !== undefined && limits.reference_image !== true) {
    // Spec, Errors: images use 403 MODEL_NOT_ALLOWED for a capability mismatch.
    throw new GatewayError(403, "MODEL_NOT_ALLOWED", `${model.id} does not take a reference_image (image-to-image)`, { details: { field: "reference_image" } });
  }
}

/**
 * How long a URL answer's images are kept: as long as their link lives, or, under an idempotency key, as long as the
 * key's record, so a replay can sign a fresh link to them (./image-replay.ts).
 */
function keepSeconds(ctx: GatewayContext): number {
  // Only a key the idempotency plugin holds is replayed: a key sent through a pipeline without it keeps nothing longer.
  return ctx.keptForReplay ? Math.max(IMAGE_URL_TTL_S, IDEMPOTENCY_WINDOW_MS / 1000) : IMAGE_URL_TTL_S;
}

/** At least one image, each with bytes: an answer without them would be billed for nothing (the drivers decode strictly). */
export function checkImages(out: ImagesOutput, provider: string): void {
  const images: unknown = out?.images;
  if (!Array.isArray(images) || !images.length) throw invalidAnswer(provider, `Provider ${provider} returned no images`);
  if (images.some((img) => !(img?.bytes instanceof Uint8Array) || img.bytes.length === 0)) throw invalidAnswer(provider, `Provider ${provider} returned an image without data`);
}

async function images(ctx: GatewayContext): Promise<void> {
  echoTraceId(ctx);
  const body = ctx.body;
  const model = ctx.model!;
  requireType(model, "image", 403, "MODEL_NOT_ALLOWED");
  checkLimits(ctx);
  // Each target is sent, and priced at, its own model's tier (the ledger and x-mg-cost-usd bill the served one's);
  // a target that cannot serve the named size or quality is left out (a 400 when none can).
  const serving = servingTiers(ctx.targets, (id) => ctx.config.models.get(id), model, body);
  ctx.targets = serving.map(({ target, tier }) => ({ ...target, pricing: pricingForTier(target.pricing, tier) }));
  const base: Omit<ImagesCall, "size" | "quality"> = {
    prompt: body.prompt,
    n: body.n ?? 1,
    urlFetch: ctx.config.server.urlFetch,
    style: body.style,
    referenceImage: body.reference_image,
    user: body.user,
    providerOptions: body.providerOptions,
    extra: extraFields(body, KNOWN),
  };
  const calls = new Map(serving.map(({ target, tier }) => [target.modelId, { ...base, size: tier.size, quality: tier.quality } satisfies ImagesCall]));
  // dispatch hands every attempt the sub-context's body: each attempt gets its own target's call (as responses-state does).
  const inner = ctx.invoke;
  ctx.invoke = (c, driver, op, target, opts) => {
    c.body = calls.get(target.modelId);
    return inner?.(c, driver, op, target, opts);
  };
  const hold = typeof limitsOf(model).timeout_seconds === "number" ? limitsOf(model).timeout_seconds * 1000 : IMAGE_HOLD_MS;
  const out = await withDeadline(hold, `Image generation on ${model.id}`, (signal) =>
    dispatchCall<ImagesOutput>(ctx, "images", calls.values().next().value, { signal, targets: withTimeout(ctx.targets, hold), check: checkImages }), ctx.signal);

  const asUrl = body.response_format === "url";
  const keepS = asUrl ? keepSeconds(ctx) : 0;
  const data = await Promise.all(out.images.map(async (img) => {
    const item: Record<string, string> = {};
    if (asUrl) {
      const meta = await keepAsset(ctx.gateway, "img", img.bytes, img.contentType, keepS);
      item.url = (await signAsset(ctx, meta, IMAGE_URL_TTL_S)).url;
    } else {
      item.b64_json = Buffer.from(img.bytes.buffer, img.bytes.byteOffset, img.bytes.byteLength).toString("base64");
    }
    if (img.revisedPrompt && img.revisedPrompt !== body.prompt) item.revised_prompt = img.revisedPrompt;
    return item;
  }));
  const inputTokens = out.inputTokens ?? estimateTokens(body.prompt);
  const outputTokens = out.outputTokens ?? 0;
  const imageTokens = Math.min(inputTokens, out.inputImageTokens ?? 0);
  ctx.usage = { inputTokens, outputTokens, images: data.length };
  ctx.response = {
    kind: "json",
    status: 200,
    body: {
      id: `img_${ulid()}`,
      created: Math.floor(Date.now() / 1000),
      model: servedModelId(ctx),
      data,
      // OpenAI's image usage (total, output and the input's text/image split), and the spec's output_images beside it.
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { text_tokens: inputTokens - imageTokens, image_tokens: imageTokens },
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
        output_images: data.length,
      },
      providerMetadata: metadata(ctx),
    },
  };
}

export const imagesEndpoint: EndpointSpec = {
  kind: "images",
  method: "POST",
  route: "/api/v1/images/generations",
  protocol: "openai",
  validate: validateImages,
  invalidCode: "BAD_REQUEST",
  // The openai SDK types n, size, quality, style and response_format nullable: null is not sent, as on chat.
  prepare: (ctx) => dropNullFields(ctx.body),
  terminal: images,
  refreshKept: refreshImageUrls,
  openapi: { summary: "Generate images (OpenAI-compatible)", requestSchema: "ImageGenerationRequest", responseSchema: "ImageResult", headers: ["x-mg-trace-id"], responseHeaders: ["x-mg-trace-id"], tag: "Inference" },
};
