// stream-transcoder: when the chosen provider does not speak the client's protocol natively, translate the request,
// call the provider in its own protocol, and translate the answer back: JSON, or a stream event by event in
// constant memory. Messages clients reach chat-speaking drivers (openai, gemini, sim); chat clients reach
// messages-speaking drivers (anthropic). It works by setting ctx.invoke, which dispatch uses for every attempt.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { OperationName } from "../../core/dispatch.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderDriver, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import { messagesToChatRequest } from "../../providers/translate/messages-to-chat/request.ts";
import { chatToMessagesResponse } from "../../providers/translate/messages-to-chat/response.ts";
import { chatToMessagesStream } from "../../providers/translate/messages-to-chat/stream.ts";
import { chatToMessagesRequest } from "../../providers/translate/chat-to-messages/request.ts";
import { messagesToChatResponse } from "../../providers/translate/chat-to-messages/response.ts";
import { messagesToChatStream } from "../../providers/translate/chat-to-messages/stream.ts";
import { placeAutoMarkers, stripChatCacheMarkers } from "../../core/prompt-cache/markers.ts";
import { droppedKnobs } from "./knobs.ts";

export const DROPPED_HEADER = DROPPED_PARAMS_HEADER;

export function invokeTranslated(ctx: GatewayContext, driver: ProviderDriver, op: OperationName, target: Target, call: CallOptions): Promise<ProviderResult> | undefined {
  const dropped = droppedKnobs(ctx.body, driver.protocol, target.provider);
  let pending: Promise<ProviderResult> | undefined;
  if (op === "messages" && !driver.messages && driver.chat) {
    const t = messagesToChatRequest(ctx.body);
    dropped.push(...t.dropped);
    pending = driver.chat(t.body, target, call).then((r) => toMessages(r, driver.name, ctx.body.model));
  } else if (op === "chat" && !driver.chat && driver.messages) {
    const t = chatToMessagesRequest(ctx.body, target);
    dropped.push(...t.dropped);
    if (ctx.cacheAuto) placeAutoMarkers(t.body);
    const send = (driver as { translatedMessages?: ProviderDriver["messages"] }).translatedMessages ?? driver.messages;
    const includeUsage = ctx.body.stream_options?.include_usage === true;
    pending = send.call(driver, t.body, target, call).then((r) => toChat(r, driver.name, includeUsage, t.jsonTool));
  } else if (op === "chat" && driver.chat) {
    // Only Anthropic understands cache_control; other upstreams may reject the unknown field.
    const body = ctx.cacheMarkers && driver.protocol !== "anthropic" ? stripChatCacheMarkers(ctx.body) : ctx.body;
    pending = driver.chat(body, target, call);
  } else if (op === "messages" && driver.messages) {
    pending = driver.messages(ctx.body, target, call);
  }
  delete ctx.responseHeaders[DROPPED_HEADER];
  if (!pending) return undefined;
  return pending.then((r) => {
    // A driver may report fields it dropped itself (gemini): one header lists both.
    const own = r.headers?.[DROPPED_HEADER];
    if (own) dropped.push(...own.split(","));
    if (dropped.length) r = { ...r, headers: { ...r.headers, [DROPPED_HEADER]: [...new Set(dropped)].join(",") } };
    return r;
  });
}

function toMessages(r: ProviderResult, provider: string, model: string): ProviderResult {
  if (r.kind === "json") return { ...r, body: chatToMessagesResponse(r.body) };
  if (r.kind === "stream") return { ...r, events: chatToMessagesStream(r.events, { provider, model }) };
  return r;
}

function toChat(r: ProviderResult, provider: string, includeUsage: boolean, jsonTool?: string): ProviderResult {
  if (r.kind === "json") return { ...r, body: messagesToChatResponse(r.body, undefined, jsonTool) };
  if (r.kind === "stream") return { ...r, events: messagesToChatStream(r.events, { includeUsage, provider, jsonTool }) };
  return r;
}

export default definePlugin({
  name: "stream-transcoder",
  handle(ctx, next) {
    if (ctx.endpoint === "chat" || ctx.endpoint === "messages") {
      ctx.invoke = (driver, op, target, call) => invokeTranslated(ctx, driver, op, target, call);
    }
    return next();
  },
});
