// POST /api/v1/responses/input_tokens (the openai SDK's responses.inputTokens.count): a Responses request's input
// counted on any language model, answered `{ object: "response.input_tokens", input_tokens }` as OpenAI answers it.
// Each attempt counts what a create would send its target. A target whose create passes through to OpenAI's own
// /responses (native_responses) gets the count there (the driver's countResponsesTokens: POST
// /v1/responses/input_tokens), so hosted tools, file ids, a conversation and a previous_response_id that upstream
// holds are counted where they live, and a continuation is sent as create sends it (by id to the upstream that made
// the previous response, else the whole history, also once the upstream lost an item it references:
// core/responses/native-history.ts); a host without that route (404/405) is counted locally instead. Any other target
// is counted through the translator its create uses (core/responses/count-as-create.ts: Responses -> chat and the
// local tokenizer or simulator, -> Gemini and its countTokens, -> Messages and count_tokens for Claude), tool_choice
// included (a forced tool changes the tool prompt, and turns Claude's thinking off).
// mcp tools the gateway runs are counted as the functions create offers (core/responses/mcp-count.ts). x-mg-token-count
// says where the count came from. Not billed: like count_tokens, budget and metering skip it, and rate limits charge
// one request and no tokens.
import { validateResponses } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import { GatewayError } from "../errors.ts";
import { Unsupported, upstreamProtocolOf } from "../contracts/translator.ts";
import { TOKEN_COUNT_HEADER, type ProviderResult } from "../contracts/provider.ts";
import { buildConversation, type Conversation } from "../responses/conversation.ts";
import { responseOwner } from "../responses/owner.ts";
import { mcpAsCreateSends } from "../responses/mcp-count.ts";
import { nativeRebuilt, sameUpstreamRebuilt, upstreamLostItem, upstreamLostPrevious } from "../responses/native-history.ts";
import { countAsCreate } from "../responses/count-as-create.ts";
import { countRouteMissing, NO_COUNT_ROUTE } from "../responses/count-route-missing.ts";
import { continuesByHistory } from "../responses/stored-view.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";

/**
 * The request fields that make up the input (OpenAI's InputTokenCountParams; previous_response_id is followed as
 * create follows it). A stored prompt, which only OpenAI expands and its count does not take, is kept so it is
 * refused by name rather than counted without it.
 */
const INPUT_FIELDS = ["model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning", "truncation", "personality", "previous_response_id", "conversation", "prompt", "providerOptions"];

function inputOf(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of INPUT_FIELDS) if (body[f] !== undefined) out[f] = body[f];
  return out;
}

/** What each attempt needs beyond ctx.body (the rebuilt conversation): the request as sent, and whether mcp was converted. */
interface CountState { conv: Conversation; mcpConverted: boolean }
const states = new WeakMap<GatewayContext, CountState>();

/** The count at the native upstream, with the body create would send it (responses-state.ts serveWithState). */
function countNatively(ctx: GatewayContext, state: CountState, send: (body: any) => Promise<ProviderResult>, provider: string): Promise<ProviderResult> {
  if (ctx.body.prompt !== undefined) {
    throw new Unsupported(new GatewayError(400, "INVALID_REQUEST", "prompt: OpenAI's input_tokens does not take a stored prompt, so this request cannot be counted with it; count the prompt's text as input instead", { details: { field: "prompt" } }));
  }
  const previous = state.conv.previous;
  if (!previous) return send(ctx.body);
  if (!(previous.native && previous.provider === provider)) return send(nativeRebuilt(ctx.body));
  if (state.mcpConverted || continuesByHistory(ctx)) {
    // As create (responses-state.ts): an item the upstream forgot goes, the history kept whole without it.
    return send(sameUpstreamRebuilt(ctx.body)).catch((e: unknown) => {
      if (!upstreamLostItem(e)) throw e;
      return send(nativeRebuilt(ctx.body));
    });
  }
  // By id, as create continues it there; the upstream that lost it gets the whole history as kept.
  return send(state.conv.passthrough).catch((e: unknown) => {
    if (!upstreamLostPrevious(e)) throw e;
    return send(nativeRebuilt(ctx.body));
  });
}

/** Each attempt's count (one function, see ctx.invoke): natively where create passes through, else as create translates. */
const countOn: NonNullable<GatewayContext["invoke"]> = (ctx, driver, _op, target, call) => {
  const state = states.get(ctx)!;
  if (driver.countResponsesTokens && upstreamProtocolOf(driver, "responses", target) === "responses") {
    return countNatively(ctx, state, (body) => driver.countResponsesTokens!(body, target, call), target.provider).catch((e: unknown) => {
      // A host that serves /responses but has no count route: counted here, as before the upstream count, and said so.
      const local = countRouteMissing(e) ? countAsCreate(ctx, driver, target, call, "chat") : undefined;
      if (!local) throw e;
      return local.then((r) => ({ ...r, headers: { ...r.headers, [TOKEN_COUNT_HEADER]: `${r.headers?.[TOKEN_COUNT_HEADER]}; ${NO_COUNT_ROUTE}` } }));
    });
  }
  return countAsCreate(ctx, driver, target, call); // undefined: dispatch passes over a provider that cannot count
};

async function terminal(ctx: GatewayContext): Promise<void> {
  const conv = await buildConversation(ctx.gateway.store.responses, responseOwner(ctx), inputOf(ctx.body), Date.now());
  ctx.body = conv.rebuilt;
  const mcpConverted = await mcpAsCreateSends(ctx);
  states.set(ctx, { conv, mcpConverted });
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
