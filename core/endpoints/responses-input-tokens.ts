// POST /api/v1/responses/input_tokens (the openai SDK's responses.inputTokens.count): a Responses request's input
// counted on any language model, answered `{ object: "response.input_tokens", input_tokens }` as OpenAI answers it.
// The count is the Messages count_tokens path (core/endpoints/count-tokens.ts, the driver's countTokens op: the
// provider's own count, or a tokenizer; x-mg-token-count says which), reached by reading the request as a create is
// translated for a Messages upstream (Responses -> chat -> Messages). previous_response_id is followed as a create
// follows it, so a continuation counts its earlier turns. Not billed: like count_tokens, budget and metering skip it,
// and rate limits charge one request and no tokens.
import { validateResponses } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import { buildConversation } from "../responses/conversation.ts";
import { responseOwner } from "../responses/owner.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";

/**
 * The request fields that make up the input (OpenAI's InputTokenCountParams, less tool_choice, truncation and
 * personality, which change no token of it; previous_response_id is replaced by the turns it names). What only OpenAI can expand (conversation, a stored prompt) is kept so
 * the translator refuses it by name rather than counting a request without it.
 */
const INPUT_FIELDS = ["model", "input", "instructions", "tools", "parallel_tool_calls", "text", "reasoning", "previous_response_id", "conversation", "prompt", "providerOptions"];

function inputOf(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of INPUT_FIELDS) if (body[f] !== undefined) out[f] = body[f];
  return out;
}

/** Each attempt's count: the request as a Messages count body, on the driver's countTokens (one function, see ctx.invoke). */
const countOn: NonNullable<GatewayContext["invoke"]> = (ctx, driver, _op, target, call) => {
  if (!driver.countTokens) return undefined; // dispatch passes over a provider that cannot count
  const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: driver.protocol, provider: target.provider };
  const t = ctx.gateway.translators.responses.messages!.request(ctx.body, target, opts);
  // What is counted is the input: the output limit and sampling settings the translation adds play no part.
  const { max_tokens: _max, stream: _stream, temperature: _t, top_p: _p, stop_sequences: _s, metadata: _m, tool_choice: _tc, ...count } = t.body as Record<string, unknown>;
  const body = { ...count, model: ctx.body.model, ...(ctx.body.providerOptions ? { providerOptions: ctx.body.providerOptions } : {}) };
  // A URL the upstream will not fetch itself is downloaded first, as for a create.
  const ready = t.download ? t.download(ctx.config.server.urlFetch, call.signal) : Promise.resolve();
  return ready.then(() => driver.countTokens!(body, target, call));
};

async function terminal(ctx: GatewayContext): Promise<void> {
  const conv = await buildConversation(ctx.gateway.store.responses, responseOwner(ctx), inputOf(ctx.body), Date.now());
  ctx.body = conv.rebuilt;
  ctx.invoke = countOn;
  await dispatch(ctx, "countTokens");
  const r = ctx.response;
  if (r?.kind !== "json") return;
  const { input_tokens, providerMetadata } = r.body as { input_tokens: number; providerMetadata?: unknown };
  ctx.response = { ...r, body: { object: "response.input_tokens", input_tokens, ...(providerMetadata ? { providerMetadata } : {}) } };
}

export const responsesInputTokensEndpoint: EndpointSpec = {
  kind: "count_tokens",
  method: "POST",
  route: "/api/v1/responses/input_tokens",
  protocol: "responses",
  validate: validateResponses,
  terminal,
  openapi: {
    operationId: "count_response_input_tokens",
    summary: "Count a Responses request's input tokens on any language model (OpenAI responses.inputTokens.count-compatible); not billed. Output and sampling fields are taken and ignored",
    requestSchema: "ResponsesRequest",
    responseSchema: "ResponseInputTokens",
    responseHeaders: ["x-mg-token-count"],
    tag: "Inference",
  },
};
