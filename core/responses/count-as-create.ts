// A Responses count (POST /responses/input_tokens) on a translated target: the request goes through the translator
// its create goes through (the stream-transcoder's pick: Responses -> chat, -> Gemini, -> Messages for Claude) and is
// counted by that protocol's count: the driver's chat count (the local tokenizer, the simulator), Gemini's own
// countTokens, or the Messages count_tokens path. Read through any other protocol it would be refused under names the
// client never sent (web_search as Anthropic's web_search_20250305 on a chat or Gemini upstream) where create answers,
// and a refusal names the client's field as create's does (the same translator throws it).
import { upstreamProtocolOf, type TranslateOptions, type Translator, type UpstreamProtocol } from "../contracts/translator.ts";
import type { CallOptions, Operation, ProviderDriver, ProviderResult, Target } from "../contracts/provider.ts";
import type { GatewayContext } from "../pipeline/context.ts";

interface CountPath { translator: Translator; count: Operation; messages: boolean }

/** The translator create uses for this target with its protocol's count op; the Messages path where the driver has no other. */
function countPath(ctx: GatewayContext, driver: ProviderDriver, protocol: UpstreamProtocol | undefined): CountPath | undefined {
  const { responses } = ctx.gateway.translators;
  if (protocol === "chat" && driver.countChatTokens && responses.chat) return { translator: responses.chat, count: driver.countChatTokens, messages: false };
  if (protocol === "gemini" && driver.countGeminiTokens && responses.gemini) return { translator: responses.gemini, count: driver.countGeminiTokens, messages: false };
  if (driver.countTokens && responses.messages) return { translator: responses.messages, count: driver.countTokens, messages: true };
  return undefined;
}

/** The Messages count body: the input only (count_tokens refuses the output limit and sampling fields). */
function messagesCountBody(translated: Record<string, unknown>, body: Record<string, any>): Record<string, unknown> {
  const { max_tokens: _max, stream: _stream, temperature: _t, top_p: _p, stop_sequences: _s, metadata: _m, ...count } = translated;
  return { ...count, model: body.model, ...(body.providerOptions ? { providerOptions: body.providerOptions } : {}) };
}

/**
 * ctx.body counted on `target` as its create would be translated; undefined when the driver cannot count (dispatch
 * passes it over). The chat and Gemini counts read only the input, so the output settings translated along are left be.
 * `protocol` names the translation when it is not create's own (a native target counted locally: chat, as create
 * translates for an upstream without native_responses).
 */
export function countAsCreate(
  ctx: GatewayContext, driver: ProviderDriver, target: Target, call: CallOptions, protocol = upstreamProtocolOf(driver, "responses", target),
): Promise<ProviderResult> | undefined {
  const path = countPath(ctx, driver, protocol);
  if (!path) return undefined;
  const opts: TranslateOptions = { cacheMarkers: false, cacheAuto: false, driverProtocol: driver.protocol, provider: target.provider };
  const t = path.translator.request(ctx.body, target, opts);
  // A URL the upstream will not fetch itself (an image for Gemini) is downloaded first, as for a create; t.body is
  // completed in place, so the body to count is made after it.
  const ready = t.download ? t.download(ctx.config.server.urlFetch, call.signal) : Promise.resolve();
  return ready.then(() => {
    const body = path.messages ? messagesCountBody(t.body as Record<string, unknown>, ctx.body) : t.body;
    return path.count.call(driver, body, target, call);
  });
}
