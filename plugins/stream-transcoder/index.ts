// stream-transcoder: the one place protocol translation is applied. For each attempt (a fallback may cross
// protocols) it picks the translator for (client protocol, the driver's upstream protocol) from the built-ins
// (providers/translate/, one folder per pair, identity included), sends the translated body to the driver's native
// op and translates the answer back: JSON, or a stream event by event in constant memory. It works by setting
// ctx.invoke, which dispatch uses for every attempt. Without this plugin no cross-protocol pair works (check says so).
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { OperationName } from "../../core/dispatch.ts";
import { GatewayError } from "../../core/errors.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderDriver, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import { Unsupported, upstreamProtocolOf, type TranslateOptions, type Translator, type Translators, type UpstreamProtocol } from "../../core/contracts/translator.ts";
import { withinOutputMaximum } from "../../core/metering/output-limit.ts";
import { droppedKnobs } from "./knobs.ts";
import { keeper, recall } from "./memo.ts";


export const DROPPED_HEADER = DROPPED_PARAMS_HEADER;

const FAMILY_KNOBS: Partial<Record<string, string>> = { messages: "anthropic", gemini: "gemini" };

export function invokeTranslated(
  ctx: GatewayContext, translators: Translators, driver: ProviderDriver, op: OperationName, target: Target, call: CallOptions,
): Promise<ProviderResult> | undefined {
  if (op !== "chat" && op !== "messages" && op !== "responses" && op !== "gemini") return undefined;
  const upstream = upstreamProtocolOf(driver, op, target);
  const tr = upstream && translators[op][upstream];
  if (!tr) return undefined;
  const opts: TranslateOptions = {
    cacheMarkers: ctx.cacheMarkers === true, cacheAuto: ctx.cacheAuto === true, driverProtocol: driver.protocol, provider: driver.name,
    answerBytes: ctx.config.server.upstreamLimits?.answer_bytes,
  };
  // State a client may drop between turns (Claude's signed thinking, for chat clients): kept per project, recalled
  // when the request needs it back (memo.ts). Only then is this attempt asynchronous before its upstream call.
  const project = tr.recallKeys ? ctx.auth?.projectId : undefined;
  if (project === undefined) return translateAndSend(ctx, tr, upstream, driver, target, call, opts);
  opts.keep = keeper(ctx, project);
  const ids = tr.recallKeys!(ctx.body, target);
  if (!ids.length) return translateAndSend(ctx, tr, upstream, driver, target, call, opts);
  return recall(ctx, project, ids).then((recalled) => {
    opts.recalled = recalled;
    const pending = translateAndSend(ctx, tr, upstream, driver, target, call, opts);
    if (!pending) throw new Unsupported(new GatewayError(400, "INVALID_REQUEST", `Provider "${driver.name}" (${driver.protocol}) does not support ${op} requests`, { details: { field: "model" } }));
    return pending;
  });
}

/** Translate, send to the driver's native op, translate the answer back; undefined when the driver lacks that op. */
function translateAndSend(
  ctx: GatewayContext, tr: Translator, upstream: UpstreamProtocol, driver: ProviderDriver, target: Target, call: CallOptions, opts: TranslateOptions,
): Promise<ProviderResult> | undefined {
  // A translated client's output limit above this endpoint's maximum is lowered to it (core/metering/output-limit.ts:
  // the budget reserved the same) and named; passed through, it goes as sent.
  const fitted = tr.native ? { body: ctx.body, lowered: [] } : withinOutputMaximum(ctx.body, target.maxTokens);
  const t = tr.request(fitted.body, target, opts);
  const send = driver[t.op];
  if (!send) return undefined;
  // A driver in front of several model families (Vertex) honours the knobs of the family this target speaks.
  const knobProtocol = driver.upstreamFor ? FAMILY_KNOBS[upstream] ?? driver.protocol : driver.protocol;
  const knobs = [...droppedKnobs(ctx.body, knobProtocol, target.provider), ...fitted.lowered];
  if (ctx.responseHeaders[DROPPED_HEADER] !== undefined) delete ctx.responseHeaders[DROPPED_HEADER];
  // A translated body is not the client's: its protocol headers (anthropic-version, -beta) do not apply.
  const upstreamCall = tr.native ? call : { ...call, clientHeaders: {} };
  // Bytes the upstream will not fetch itself (a client's image URL for Gemini) are downloaded first; a refusal is
  // the client's 400, not the upstream's error, so it skips tr.error.
  const sent = t.download
    ? t.download(ctx.config.server.urlFetch, call.signal).then(() => send.call(driver, t.body, target, upstreamCall).catch(upstreamError))
    : send.call(driver, t.body, target, upstreamCall).catch(upstreamError);
  function upstreamError(e: unknown): never {
    throw e instanceof GatewayError ? tr.error(e, t.state) : e;
  }
  return sent.then(
    (r) => {
      if (r.kind === "json") r = { ...r, body: translateAnswer(tr, r.body, t.state, call, driver.name) };
      else if (r.kind === "stream") r = { ...r, events: tr.stream(r.events, t.state, call) };
      // t.dropped is read now, not before sending: a download may name what a block lost to what its URL served
      // (claude-url-sources.ts). A driver may report fields it dropped itself: one header lists them all.
      const dropped = [...knobs, ...t.dropped];
      const own = r.headers?.[DROPPED_HEADER];
      if (own) dropped.push(...own.split(","));
      if (dropped.length) r = { ...r, headers: { ...r.headers, [DROPPED_HEADER]: [...new Set(dropped)].join(",") } };
      return r;
    },
  );
}

/**
 * A decoded answer translated for the client. The decoders check each answer's shape (providers/answer-shape.ts);
 * should a translator still trip over one (a TypeError reading a field the upstream left out), that is the answer's
 * fault, not the gateway's: a retryable 502 invalid_answer counted against the provider, never a 500.
 */
function translateAnswer(tr: Translator, body: unknown, state: unknown, call: CallOptions, provider: string): unknown {
  try {
    return tr.response(body, state, call);
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider}'s answer could not be read; it was dropped`, {
      retryable: true, details: { provider, reason: "invalid_answer" }, cause: e,
    });
  }
}

/** One function for every request (not a closure per request: see GatewayContext.invoke). */
const invoke: NonNullable<GatewayContext["invoke"]> = (ctx, driver, op, target, call) =>
  invokeTranslated(ctx, ctx.gateway.translators, driver, op, target, call);

export default definePlugin({
  name: "stream-transcoder",
  handle(ctx, next) {
    if (ctx.endpoint === "chat" || ctx.endpoint === "messages" || ctx.endpoint === "responses" || ctx.endpoint === "gemini") ctx.invoke = invoke;
    return next();
  },
});
