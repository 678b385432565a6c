// Chat client -> Gemini upstream. The driver only speaks generateContent; a JSON answer's usage (usageMetadata) is
// reported here, a stream's by the driver, once per upstream read (codecs/gemini/answer.ts).
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import type { Translator } from "../../../core/contracts/translator.ts";
import type { UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { transportError } from "../../http.ts";
import { chatToGeminiRequest } from "./request.ts";
import { fromGeminiUsage, geminiToChatResponse } from "./response.ts";
import { GeminiToChatStream } from "./stream.ts";
import { endAfterAnswer } from "../end-after-answer.ts";
import { requestedChoices } from "../../../core/metering/output-limit.ts";
import { inlineUrls } from "./media-urls.ts";
import { forClient } from "../client-names.ts";
import { functionCallAnswer, functionCallStream, wantsFunctionCall } from "../chat-tool-forms-answer.ts";
import { GEMINI_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/**
 * oneCall: the client sent parallel_tool_calls: false, which Gemini has no setting for (answers keep their first call).
 * functionCall: the client used legacy `functions`, so the answer goes back as function_call (chat-tool-forms-answer.ts).
 * names: tool names Gemini refuses, sent changed (tool-names.ts).
 */
interface State { includeUsage: boolean; provider: string; model: string; oneCall: boolean; functionCall: boolean; search: boolean; choices: number; names?: ToolNameMap }

export const chatToGemini: Translator<State> = {
  native: false,
  request(body, target, opts) {
    const named = upstreamToolNames(body, GEMINI_TOOL_NAMES);
    const t = chatToGeminiRequest(named.body, target);
    const op = body.stream === true ? "streamGenerateContent" : "generateContent";
    // search: Gemini was asked to search, so a stream keeps its text to place the sources it cites (stream.ts).
    const search = Array.isArray(t.body.tools) && t.body.tools.some((x: any) => x?.googleSearch);
    const state = { includeUsage: body.stream_options?.include_usage === true, provider: opts.provider, model: target.upstreamModel, oneCall: body.parallel_tool_calls === false, functionCall: wantsFunctionCall(body), search, choices: requestedChoices(body), names: named.names };
    // Image URLs Gemini would refuse are inlined per attempt, just before sending (after any earlier refusal); the
    // bytes are downloaded once per client request and reused by its retries and fallbacks (media-urls.ts). A refusal
    // names the part as the client sent it (the body of a chain, client -> chat -> Gemini, says how: client-names.ts).
    const download = t.pending.length
      ? async (policy: UrlFetchOptions, signal: AbortSignal) => {
        try {
          await inlineUrls(t.pending, policy, signal);
        } catch (e) {
          throw forClient(e, body);
        }
      }
      : undefined;
    return { op, body: t.body, dropped: t.dropped, state, ...(download ? { download } : {}) };
  },
  response(json: any, s, call) {
    call.reportUsage(fromGeminiUsage(json?.usageMetadata));
    const chat = clientToolNames(geminiToChatResponse(json, s.model, { oneCall: s.oneCall }), s.names);
    return s.functionCall ? functionCallAnswer(chat) : chat;
  },
  stream(events, s, call) {
    const out = clientToolNamesStream(relay(events, new GeminiToChatStream({ ...s, created: Math.floor(Date.now() / 1000) }), call, s.provider), s.names);
    return s.functionCall ? functionCallStream(out) : out;
  },
  error: (err) => err,
};

async function* relay(events: AsyncIterable<SseEvent>, t: GeminiToChatStream, call: CallOptions, provider: string): AsyncGenerator<SseEvent> {
  try {
    // A stall or break after every candidate finished ends the stream as the upstream's end would (end-after-answer.ts).
    for await (const ev of endAfterAnswer(events, () => t.answered(), call.signal)) {
      const out = t.push(ev);
      for (let i = 0; i < out.length; i++) yield out[i]!;
    }
    yield* t.end();
  } catch (err) {
    // A candidate the upstream finished before failing keeps its finish and sources (held while others streamed).
    if (!call.signal.aborted) yield* t.finishes();
    throw transportError(provider, err, call.signal);
  }
}
