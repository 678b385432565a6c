// Chat client -> Anthropic messages upstream. Usage is reported by the driver, which reads the native stream.
// Signed thinking a chat client drops between turns is kept by the gateway and put back (replay.ts).
import type { Translator } from "../../../core/contracts/translator.ts";
import { markTranslated } from "../../../core/prompt-cache/markers.ts";
import { chatToMessagesRequest } from "./request.ts";
import { messagesToChatResponse } from "./response.ts";
import { messagesToChatStream } from "./stream.ts";
import { keptReasoning, recallIds, withRecalled } from "./replay.ts";
import { functionCallAnswer, functionCallStream, wantsFunctionCall } from "../chat-tool-forms-answer.ts";

/** functionCall: the client used legacy `functions`, so the answer goes back as function_call (chat-tool-forms-answer.ts). */
interface State { includeUsage: boolean; provider: string; jsonTool?: string; keep?: (id: string, value: string) => void; functionCall: boolean }

export const chatToMessages: Translator<State> = {
  native: false,
  recallKeys: recallIds,
  request(body, target, opts) {
    const t = chatToMessagesRequest(withRecalled(body, opts.recalled), target);
    markTranslated(t.body, opts.cacheAuto); // auto markers; more than Anthropic takes is refused here
    const keep = t.body.thinking ? opts.keep : undefined; // only an answer with thinking has reasoning to keep
    const state = { includeUsage: body.stream_options?.include_usage === true, provider: opts.provider, jsonTool: t.jsonTool, keep, functionCall: wantsFunctionCall(body) };
    return { op: "messages", body: t.body, dropped: t.dropped, state };
  },
  response(json, s) {
    const chat: any = messagesToChatResponse(json, undefined, s.jsonTool);
    const m = chat.choices[0].message;
    const kept = s.keep && keptReasoning((m.tool_calls ?? []).map((tc: { id: string }) => tc.id), m.reasoning_details ?? []);
    if (kept) s.keep!(...kept);
    return s.functionCall ? functionCallAnswer(chat) : chat;
  },
  stream: (events, s) => (s.functionCall ? functionCallStream(messagesToChatStream(events, s)) : messagesToChatStream(events, s)),
  error: (err) => err,
};
