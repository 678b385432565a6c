// Chat client -> Anthropic messages upstream. Usage is reported by the driver, which reads the native stream.
import type { Translator } from "../../../core/contracts/translator.ts";
import { placeAutoMarkers } from "../../../core/prompt-cache/markers.ts";
import { chatToMessagesRequest } from "./request.ts";
import { messagesToChatResponse } from "./response.ts";
import { messagesToChatStream } from "./stream.ts";

interface State { includeUsage: boolean; provider: string; jsonTool?: string }

export const chatToMessages: Translator<State> = {
  native: false,
  request(body, target, opts) {
    const t = chatToMessagesRequest(body, target);
    if (opts.cacheAuto) placeAutoMarkers(t.body);
    const state = { includeUsage: body.stream_options?.include_usage === true, provider: opts.provider, jsonTool: t.jsonTool };
    return { op: "messages", body: t.body, dropped: t.dropped, state };
  },
  response: (json, s) => messagesToChatResponse(json, undefined, s.jsonTool),
  stream: (events, s) => messagesToChatStream(events, s),
  error: (err) => err,
};
