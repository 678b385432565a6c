// Chat client -> Bedrock Converse upstream. The driver speaks only Converse (JSON, or stream events named by their
// :event-type); a JSON answer's usage comes out of this translation (Converse `usage`), reported through
// call.reportUsage; a stream's (its `metadata` event) is reported by the driver, before the read it came in is handed
// on (providers/bedrock/converse.ts), so it is not reported again here.
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import type { Translator } from "../../../core/contracts/translator.ts";
import type { UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { transportError } from "../../http.ts";
import { forClient } from "../client-names.ts";
import { chatToConverseRequest } from "./request.ts";
import { converseToChatResponse, fromConverseUsage } from "./response.ts";
import { ConverseToChatStream } from "./stream.ts";
import { functionCallAnswer, functionCallStream, wantsFunctionCall } from "../chat-tool-forms-answer.ts";
import { CONVERSE_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/** functionCall: the client used legacy `functions`, so the answer goes back as function_call (chat-tool-forms-answer.ts). */
/** jsonTool: the tool standing in for response_format on Claude (its input is the JSON answer). */
/** stops: the stop sequences sent, for the one a stop_sequence answer matched (stop-sequence.ts). */
/** oneCall: the client sent parallel_tool_calls: false, which Converse has no field for: answers keep their first call. */
/** names: tool names Converse refuses, sent changed (tool-names.ts). */
interface State { includeUsage: boolean; provider: string; model: string; functionCall: boolean; jsonTool?: string; stops: string[]; oneCall: boolean; names?: ToolNameMap }

export const chatToConverse: Translator<State> = {
  native: false,
  request(body, target, opts) {
    const named = upstreamToolNames(body, CONVERSE_TOOL_NAMES);
    const t = chatToConverseRequest(named.body, target, opts.cacheAuto);
    const stops = (t.body.inferenceConfig as { stopSequences?: string[] } | undefined)?.stopSequences ?? [];
    const state = { includeUsage: body.stream_options?.include_usage === true, provider: opts.provider, model: target.upstreamModel, functionCall: wantsFunctionCall(body), jsonTool: t.jsonTool, stops, oneCall: body.parallel_tool_calls === false, names: named.names };
    // Image and PDF URLs are downloaded per attempt, just before sending, once per client request (url-media.ts); a
    // refusal names the part as the client sent it (a chain's chat body says how: client-names.ts).
    const urls = t.urls;
    const download = urls
      ? async (policy: UrlFetchOptions, signal: AbortSignal) => {
        try {
          await urls.download(policy, signal);
        } catch (e) {
          throw forClient(e, body);
        }
      }
      : undefined;
    return { op: body.stream === true ? "converseStream" : "converse", body: t.body, dropped: t.dropped, state, ...(download ? { download } : {}) };
  },
  response(json: any, s, call) {
    call.reportUsage(fromConverseUsage(json?.usage));
    const chat = clientToolNames(converseToChatResponse(json, s.model, undefined, s.jsonTool, s.stops, s.oneCall), s.names);
    return s.functionCall ? functionCallAnswer(chat) : chat;
  },
  stream(events, s, call) {
    const out = clientToolNamesStream(relay(events, new ConverseToChatStream({ ...s, created: Math.floor(Date.now() / 1000) }), call, s.provider), s.names);
    return s.functionCall ? functionCallStream(out) : out;
  },
  error: (err) => err,
};

async function* relay(events: AsyncIterable<SseEvent>, t: ConverseToChatStream, call: CallOptions, provider: string): AsyncGenerator<SseEvent> {
  try {
    for await (const ev of events) {
      const out = t.push(ev);
      for (let i = 0; i < out.length; i++) yield out[i]!;
      if (t.done) return;
    }
    yield* t.end();
  } catch (err) {
    throw transportError(provider, err, call.signal);
  }
}
