// POST /api/v1beta/models/{model}:countTokens: `{contents}` (what @google/genai sends on the Gemini API; Gemini CLI
// counts media this way) or `{generateContentRequest}`, answered `{totalTokens}` for every language model. A Gemini
// upstream counts the request as the client sent it (as generateContent passes it through); for any other the count is
// the Messages count_tokens path (core/endpoints/count-tokens.ts, the driver's countTokens op: the provider's own
// count, or a tokenizer), reached by reading the request as the Gemini translators read a generation
// (Gemini -> chat -> messages). Not billed: like count_tokens, budget and metering skip it.
import { validateGeminiCountTokens } from "../../generated/validators.js";
import { dispatch } from "../../dispatch.ts";
import { invalidRequest } from "../../errors.ts";
import { upstreamProtocolOf, type TranslateOptions, type Translators } from "../../contracts/translator.ts";
import type { Target } from "../../contracts/provider.ts";
import type { GatewayContext } from "../../pipeline/context.ts";
import type { EndpointSpec } from "../spec.ts";
import { GEMINI_MODELS_ROUTE } from "./generate.ts";
import { isUrlModel, resolveGeminiModel } from "./model-name.ts";
import { camelCaseGeminiFields } from "./field-names.ts";

function prepare(ctx: GatewayContext): void {
  const model = resolveGeminiModel(ctx.params.model ?? "", ctx.config.models);
  const { contents, generateContentRequest: g, providerOptions } = ctx.body;
  if (g && contents) throw invalidRequest("send contents or generateContentRequest, not both", "generateContentRequest");
  if (!g && !contents) throw invalidRequest("countTokens needs contents or generateContentRequest", "contents");
  if (typeof g?.model === "string" && g.model && !isUrlModel(g.model, model, ctx.config.models)) {
    throw invalidRequest(`${g.model} is not the model in the URL (${model})`, "generateContentRequest.model");
  }
  ctx.body = { ...(g ?? { contents }), model, ...(providerOptions ? { providerOptions } : {}) };
}

/**
 * Each attempt's count. A Gemini upstream (the Gemini API, Gemini on Vertex) counts the client's request as it came,
 * as generateContent passes it through (the native pair's body): translated, it would refuse what generateContent
 * takes (gs:// and Files API URIs, video, cachedContent, Google's own tools). Any other gets it as a Messages count
 * body, read as the Gemini translators read a generation. One function, not a closure per request (see ctx.invoke).
 */
const countOn: NonNullable<GatewayContext["invoke"]> = (ctx, driver, _op, target, call) => {
  const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: driver.protocol, provider: target.provider };
  const { translators } = ctx.gateway;
  if (driver.countGeminiTokens && upstreamProtocolOf(driver, "gemini", target) === "gemini") {
    return driver.countGeminiTokens(translators.gemini.gemini!.request(ctx.body, target, opts).body, target, call);
  }
  if (!driver.countTokens) return undefined; // dispatch passes over a provider that cannot count
  return driver.countTokens(messagesBody(ctx.body, translators, target, opts), target, call);
};

/** The request as a Messages count body (what every driver's countTokens takes). */
function messagesBody(body: Record<string, any>, translators: Translators, target: Target, opts: TranslateOptions): Record<string, unknown> {
  // What is counted is the input: sampling settings (which a provider may refuse) and tool choice play no part.
  const { generationConfig: _gc, toolConfig: _tc, ...input } = body;
  const chat = translators.gemini.chat!.request(input, target, opts).body;
  const m = translators.chat.messages!.request(chat, target, opts).body as Record<string, unknown>;
  const { max_tokens: _max, stream: _stream, temperature: _t, top_p: _p, stop_sequences: _s, metadata: _m, ...count } = m;
  return { ...count, model: body.model, ...(body.providerOptions ? { providerOptions: body.providerOptions } : {}) };
}

async function terminal(ctx: GatewayContext): Promise<void> {
  ctx.invoke = countOn;
  await dispatch(ctx, "countTokens");
  const r = ctx.response;
  if (r?.kind !== "json") return;
  const { input_tokens, providerMetadata } = r.body as { input_tokens: number; providerMetadata?: unknown };
  ctx.response = { ...r, body: { totalTokens: input_tokens, providerMetadata } };
}

export const geminiCountTokensEndpoint: EndpointSpec = {
  kind: "count_tokens",
  method: "POST",
  route: GEMINI_MODELS_ROUTE,
  action: "countTokens",
  protocol: "gemini",
  normalize: camelCaseGeminiFields,
  validate: validateGeminiCountTokens,
  prepare,
  terminal,
  openapi: {
    operationId: "gemini_count_tokens",
    summary: "Count a request's input tokens on any language model (Gemini API-compatible countTokens); not billed",
    requestSchema: "GeminiCountTokensRequest",
    responseSchema: "GeminiCountTokensResponse",
    responseHeaders: ["x-mg-token-count"],
    tag: "Gemini",
  },
};
