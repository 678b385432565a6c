// POST /api/v1/embeddings: OpenAI-compatible. Checks every input against the model's context, settles how
// `dimensions` is met (natively, by truncation + re-normalisation, or 422), and encodes floats or base64.
import { validateEmbeddings } from "../generated/validators.js";
import { GatewayError, invalidRequest } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import type { EndpointSpec } from "./spec.ts";
import type { EmbeddingsCall, EmbeddingsOutput } from "../contracts/media.ts";
import { estimateTokens } from "../metering/estimate-tokens.ts";
import { invalidAnswer } from "../invalid-answer.ts";
import { dispatchCall, extraFields, limitsOf, metadata, requireType, servedModelId, echoTraceId } from "./media.ts";

const KNOWN = ["model", "input", "dimensions", "encoding_format", "user", "providerOptions"] as const;

/** The wire's base64 form: little-endian float32 bytes. */
export function toBase64(vec: ArrayLike<number>): string {
  const f = vec instanceof Float32Array ? vec : Float32Array.from(vec as ArrayLike<number>);
  const buf = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
  if (isLittleEndian) return buf.toString("base64");
  const le = Buffer.alloc(f.length * 4);
  for (let i = 0; i < f.length; i++) le.writeFloatLE(f[i]!, i * 4);
  return le.toString("base64");
}
const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function truncateNormalise(vec: ArrayLike<number>, dims: number): number[] {
  const out = Array.from({ length: dims }, (_, i) => Number(vec[i] ?? 0));
  const norm = Math.hypot(...out) || 1;
  return out.map((x) => x / norm);
}

type DimPlan = { native?: number; truncate?: number };

/**
 * How a requested output size is met (catalog `limits`):
 *   dimensions: native        — the upstream takes the size as a parameter (also the default)
 *   dimensions: truncate      — the gateway truncates the full vector and re-normalises (Matryoshka-trained models)
 *   dimensions_supported: false — fixed size: any other size is 422 INVALID_REQUEST
 *   dimension_values / min_dimensions — the sizes the model accepts
 */
export function planDimensions(model: ModelRuntime, wanted: number | undefined): DimPlan {
  const full = model.config.dimensions;
  if (wanted === undefined || wanted === full) return {};
  const limits = limitsOf(model);
  const mode = limits.dimensions;
  const unsupported = (why: string) =>
    new GatewayError(422, "INVALID_REQUEST", `dimensions=${wanted} is not supported by ${model.id}: ${why}`, {
      details: { field: "dimensions", ...(full ? { native_dimensions: full } : {}), ...(limits.dimension_values ? { supported: limits.dimension_values } : {}) },
    });
  if (limits.dimensions_supported === false || (mode !== undefined && mode !== "native" && mode !== "truncate")) {
    throw unsupported(`the model has a fixed output size${full ? ` of ${full}` : ""}`);
  }
  // A dimension_values list is the whole answer: `dimensions` is only the default size and a listed one may be
  // larger (Voyage's 2048 above its 1024 default). Without a list, nothing above the default is possible.
  if (Array.isArray(limits.dimension_values)) {
    if (!limits.dimension_values.includes(wanted)) throw unsupported(`supported sizes are ${limits.dimension_values.join(", ")}`);
  } else if (full !== undefined && wanted > full) throw unsupported(`the largest size is ${full}`);
  if (typeof limits.min_dimensions === "number" && wanted < limits.min_dimensions) throw unsupported(`the smallest size is ${limits.min_dimensions}`);
  return mode === "truncate" ? { truncate: wanted } : { native: wanted };
}

function checkContext(model: ModelRuntime, input: string[] | number[][]): number {
  const max = model.config.context_window;
  let total = 0;
  input.forEach((item, i) => {
    const tokens = typeof item === "string" ? estimateTokens(item) : item.length;
    total += tokens;
    if (max !== undefined && tokens > max) {
      throw invalidRequest(`input[${i}] is about ${tokens} tokens, longer than the maximum context of ${model.id} (${max} tokens)`, `input[${i}]`, { index: i, tokens, max_tokens: max });
    }
  });
  return total;
}

/** string | string[] | token ids | token-id arrays -> one list of inputs of a single kind. */
function normaliseInput(raw: string | (string | number | number[])[]): string[] | number[][] {
  if (typeof raw === "string") return [raw];
  if (raw.every((x) => typeof x === "number")) return [raw as number[]];
  if (raw.every((x) => typeof x === "string") || raw.every((x) => Array.isArray(x))) return raw as string[] | number[][];
  throw invalidRequest("input must be a string, an array of strings, or token-id arrays, not a mixture", "input");
}

/**
 * One vector per input, each a non-empty list of finite numbers (a Float32Array decoded from base64, or an array):
 * anything else (a string, nulls, an empty or missing vector) would be served as garbage and billed.
 */
export function checkVectors(out: EmbeddingsOutput, inputs: number, provider: string): void {
  const vectors: unknown = out?.vectors;
  if (!Array.isArray(vectors) || vectors.length !== inputs) {
    throw invalidAnswer(provider, `Provider ${provider} returned ${Array.isArray(vectors) ? vectors.length : 0} embeddings for ${inputs} inputs`);
  }
  vectors.forEach((v: unknown, i) => {
    if (!(v instanceof Float32Array || Array.isArray(v)) || v.length === 0 || !allFinite(v)) {
      throw invalidAnswer(provider, `Provider ${provider} returned embedding ${i} that is not a list of numbers`);
    }
  });
}

function allFinite(v: ArrayLike<unknown>): boolean {
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "number" || !Number.isFinite(v[i])) return false;
  return true;
}

async function embeddings(ctx: GatewayContext): Promise<void> {
  echoTraceId(ctx);
  const body = ctx.body;
  const model = ctx.model!;
  requireType(model, "embedding", 400, "INVALID_REQUEST");
  const input = normaliseInput(body.input);
  if (input.length > 2048) throw invalidRequest(`input has ${input.length} items; at most 2048 are allowed`, "input");
  const estimated = checkContext(model, input);
  const dims = planDimensions(model, body.dimensions);

  const call: EmbeddingsCall = {
    input,
    dimensions: dims.native,
    modelDimensions: model.config.dimensions,
    base64: body.encoding_format === "base64",
    user: body.user,
    providerOptions: body.providerOptions,
    extra: extraFields(body, KNOWN),
  };
  const out = await dispatchCall<EmbeddingsOutput>(ctx, "embeddings", call, { check: (o, provider) => checkVectors(o, input.length, provider) });
  const base64 = body.encoding_format === "base64";
  const data = out.vectors.map((v, index) => {
    const vec = dims.truncate ? truncateNormalise(v, dims.truncate) : v;
    return { object: "embedding", index, embedding: base64 ? toBase64(vec) : Array.from(vec as ArrayLike<number>) };
  });
  // A count that is not a positive whole number (a string, a batch without one) is not billed as 0: the estimate is.
  const reported = out.inputTokens;
  const tokens = typeof reported === "number" && Number.isInteger(reported) && reported > 0 ? reported : estimated;
  ctx.usage = { inputTokens: tokens, outputTokens: 0 };
  ctx.response = {
    kind: "json",
    status: 200,
    body: { object: "list", data, model: servedModelId(ctx), usage: { prompt_tokens: tokens, total_tokens: tokens }, providerMetadata: metadata(ctx) },
  };
}

export const embeddingsEndpoint: EndpointSpec = {
  kind: "embeddings",
  method: "POST",
  route: "/api/v1/embeddings",
  protocol: "openai",
  validate: validateEmbeddings,
  invalidCode: "INVALID_REQUEST",
  terminal: embeddings,
  openapi: {
    summary: "Create embeddings (OpenAI-compatible; float or base64 little-endian float32)",
    requestSchema: "EmbeddingsRequest",
    responseSchema: "EmbeddingList",
    headers: ["x-mg-trace-id"],
    responseHeaders: ["x-mg-trace-id"],
    tag: "Inference",
  },
};
