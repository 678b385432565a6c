// POST /api/v1beta/models/{model}:embedContent and :batchEmbedContents (what @google/genai's models.embedContent
// sends on the Gemini API): the Gemini shapes over the embeddings endpoint, so every embedding model answers and
// context checks, dimension plans and metering are the same. Text parts are embedded (one text per content);
// outputDimensionality is `dimensions`, taskType reaches Gemini upstreams as their taskType knob.
import { validateGeminiEmbedContent } from "../../generated/validators.js";
import { GatewayError, invalidRequest } from "../../errors.ts";
import { DROPPED_PARAMS_HEADER } from "../../contracts/provider.ts";
import type { GatewayContext } from "../../pipeline/context.ts";
import type { EndpointSpec } from "../spec.ts";
import { embeddingsEndpoint } from "../embeddings.ts";
import { GEMINI_MODELS_ROUTE } from "./generate.ts";
import { isUrlModel, resolveGeminiModel } from "./model-name.ts";
import { camelCaseGeminiFields } from "./field-names.ts";

interface One { content: any; taskType?: string; title?: string; outputDimensionality?: number; model?: string }

/**
 * One content's text. No parts, or only empty text, is refused here as /v1/embeddings refuses an empty string: joined
 * it would be "" sent upstream, embedded and billed by a lenient host (real ones refuse it with a 400 of their own).
 */
function textOf(content: any, field: string): string {
  const parts: any[] = Array.isArray(content?.parts) ? content.parts : [];
  if (!parts.length) throw invalidRequest("content has no parts to embed: send at least one text part", `${field}.parts`);
  parts.forEach((p, j) => {
    if (typeof p?.text !== "string") throw invalidRequest("only text parts can be embedded", `${field}.parts[${j}]`);
  });
  const text = parts.map((p) => p.text).join("\n");
  if (!parts.some((p) => p.text !== "")) throw invalidRequest("content has only empty text: there is nothing to embed", `${field}.parts`);
  return text;
}

/** All requests must agree on a setting the embeddings call takes once. */
function same<K extends keyof One>(list: One[], key: K, field: (i: number) => string): One[K] {
  const first = list[0]![key];
  const i = list.findIndex((r) => r[key] !== first);
  if (i !== -1) throw invalidRequest(`every request of a batch must have the same ${key}`, field(i));
  return first;
}

function prepare(ctx: GatewayContext): void {
  const model = resolveGeminiModel(ctx.params.model ?? "", ctx.config.models);
  const b = ctx.body;
  const batch = ctx.params.action === "batchEmbedContents";
  if (batch && !Array.isArray(b.requests)) throw invalidRequest("batchEmbedContents needs requests", "requests");
  if (!batch && !b.content) throw invalidRequest("embedContent needs content", "content");
  const list: One[] = batch ? b.requests : [b];
  const at = (i: number, k: string) => (batch ? `requests[${i}].${k}` : k);
  list.forEach((r, i) => {
    // The SDK repeats the model in each request (`models/{model}`): it must be the URL's.
    if (typeof r.model === "string" && r.model && !isUrlModel(r.model, model, ctx.config.models)) {
      throw invalidRequest(`${r.model} is not the model in the URL (${model})`, at(i, "model"));
    }
  });
  const input = list.map((r, i) => textOf(r.content, at(i, "content")));
  const dims = same(list, "outputDimensionality", (i) => at(i, "outputDimensionality"));
  const taskType = same(list, "taskType", (i) => at(i, "taskType"));
  const body: Record<string, unknown> = { model, input };
  if (dims !== undefined) body.dimensions = dims;
  let options = b.providerOptions;
  if (taskType) {
    // A provider knob (providerOptions.<provider>.taskType): for every provider that may serve the model.
    options = { ...options };
    for (const ep of ctx.config.models.get(model)?.config.endpoints ?? []) options[ep.provider] = { taskType, ...options[ep.provider] };
  }
  if (options !== undefined) body.providerOptions = options;
  if (list.some((r) => r.title !== undefined)) ctx.responseHeaders[DROPPED_PARAMS_HEADER] = "title";
  ctx.body = body;
}

/** The embeddings endpoint's field names, as this request named them. */
function renamed(err: GatewayError, batch: boolean): GatewayError {
  const field = err.details?.field;
  if (typeof field !== "string") return err;
  const input = /^input\[(\d+)\]/.exec(field);
  const name = field === "dimensions" ? "outputDimensionality" : input ? (batch ? `requests[${input[1]}].content` : "content") : undefined;
  if (!name) return err;
  return new GatewayError(err.status, err.code, err.message, { details: { ...err.details, field: name }, retryAfter: err.retryAfter, headers: err.headers, cause: err.cause });
}

async function terminal(ctx: GatewayContext): Promise<void> {
  const batch = ctx.params.action === "batchEmbedContents";
  try {
    await embeddingsEndpoint.terminal(ctx);
  } catch (e) {
    throw e instanceof GatewayError ? renamed(e, batch) : e;
  }
  const r = ctx.response;
  if (r?.kind !== "json") return;
  const out = r.body as { data: { embedding: number[] }[]; providerMetadata?: unknown };
  const values = out.data.map((d) => ({ values: d.embedding }));
  const body = batch ? { embeddings: values } : { embedding: values[0] };
  ctx.response = { ...r, body: { ...body, providerMetadata: out.providerMetadata } };
}

const base = { kind: "embeddings", method: "POST", route: GEMINI_MODELS_ROUTE, protocol: "gemini", normalize: camelCaseGeminiFields, validate: validateGeminiEmbedContent, prepare, terminal } as const;

export const geminiEmbedEndpoints: EndpointSpec[] = [
  {
    ...base,
    action: "embedContent",
    openapi: { operationId: "gemini_embed_content", summary: "Embed one content's text (Gemini API-compatible) with any embedding model", requestSchema: "GeminiEmbedContentRequest", responseSchema: "GeminiEmbedContentResponse", tag: "Gemini" },
  },
  {
    ...base,
    action: "batchEmbedContents",
    openapi: { operationId: "gemini_batch_embed_contents", summary: "Embed several contents in one call (Gemini API-compatible; what @google/genai sends)", requestSchema: "GeminiEmbedContentRequest", responseSchema: "GeminiBatchEmbedContentsResponse", tag: "Gemini" },
  },
];
