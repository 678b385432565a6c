// POST /api/v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse: the Gemini API for every
// language model, through the stream-transcoder plugin (passed through to Gemini upstreams — AI Studio, Vertex —
// translated for every other one). The URL's model and method are folded into the body before the pipeline reads it
// (`model`: the gateway id, `stream: true`; a client's own `stream` is Gemini's 400 for an unknown field), so
// allowlist, budget, rate limits, idempotency, router and ledger treat it exactly as a chat request; the native pair
// strips both again (providers/translate/gemini-native).
import { validateGeminiGenerateContent } from "../../generated/validators.js";
import { dispatch } from "../../dispatch.ts";
import { invalidRequest } from "../../errors.ts";
import type { GatewayContext } from "../../pipeline/context.ts";
import type { EndpointSpec } from "../spec.ts";
import { resolveGeminiModel } from "./model-name.ts";
import { camelCaseGeminiFields } from "./field-names.ts";

export const GEMINI_MODELS_ROUTE = "/api/v1beta/models/**";

/** The query parameter `alt`, when the request path has one. */
function altOf(path: string): string | null {
  const q = path.indexOf("?");
  return q === -1 ? null : new URLSearchParams(path.slice(q + 1)).get("alt");
}

function prepare(ctx: GatewayContext): void {
  const model = resolveGeminiModel(ctx.params.model ?? "", ctx.config.models);
  // The URL's method says whether to stream; Gemini's request has no `stream` field and refuses one as an unknown
  // name. Taken as sent it would stream a :generateContent (the gateway folds the method into `stream`).
  if (ctx.body.stream !== undefined) throw invalidRequest('Invalid JSON payload received. Unknown name "stream": Cannot find field (the URL\'s method decides: :generateContent or :streamGenerateContent?alt=sse)', "stream");
  const stream = ctx.params.action === "streamGenerateContent";
  // Without alt=sse Gemini streams one JSON array; the SDKs and Gemini CLI always ask for server-sent events.
  if (stream && altOf(ctx.path) !== "sse") {
    throw invalidRequest("streamGenerateContent is served as server-sent events only: add ?alt=sse to the URL (the Gemini SDKs do)", "alt");
  }
  ctx.body = { ...ctx.body, model, ...(stream ? { stream: true } : {}) };
}

const base = {
  kind: "gemini",
  method: "POST",
  route: GEMINI_MODELS_ROUTE,
  protocol: "gemini",
  normalize: camelCaseGeminiFields,
  validate: validateGeminiGenerateContent,
  prepare,
  terminal: (ctx: GatewayContext) => dispatch(ctx, "gemini"),
} as const;

export const geminiGenerateEndpoints: EndpointSpec[] = [
  {
    ...base,
    action: "generateContent",
    openapi: {
      operationId: "gemini_generate_content",
      summary: "Generate content (Gemini API-compatible) with any language model; the model id goes in the path, its slash raw or %2F-encoded",
      requestSchema: "GeminiGenerateContentRequest",
      responseSchema: "GeminiGenerateContentResponse",
      tag: "Gemini",
    },
  },
  {
    ...base,
    action: "streamGenerateContent",
    openapi: {
      operationId: "gemini_stream_generate_content",
      summary: "Stream generated content as server-sent events (Gemini API-compatible; ?alt=sse required)",
      requestSchema: "GeminiGenerateContentRequest",
      streamSchema: "GeminiGenerateContentResponse",
      query: [{ name: "alt", schema: { const: "sse" }, description: "Must be sse", required: true }],
      tag: "Gemini",
    },
  },
];
