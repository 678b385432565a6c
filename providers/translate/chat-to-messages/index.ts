// Chat client -> Anthropic messages upstream. Usage is reported by the driver, which reads the native stream.
// Signed thinking a chat client drops between turns is kept by the gateway and put back (replay.ts).
import type { Translator } from "../../../core/contracts/translator.ts";
import { markTranslated } from "../../../core/prompt-cache/markers.ts";
import { chatToMessagesRequest } from "./request.ts";
import { httpImageRefusalFor } from "./http-image-refusal.ts";
import { messagesToChatResponse } from "./response.ts";
import { messagesToChatStream } from "./stream.ts";
import { keptReasoning, recallIds, withRecalled } from "./replay.ts";
import { functionCallAnswer, functionCallStream, wantsFunctionCall } from "../chat-tool-forms-answer.ts";
import { keepingLegacyReasoning, legacyCallHash, legacyCallKey, legacyConversationHash } from "./legacy-replay.ts";
import type { Hash } from "node:crypto";
import { ANTHROPIC_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/**
 * functionCall: the client used legacy `functions`, so the answer goes back as function_call (chat-tool-forms-answer.ts)
 * and, with thinking on, its reasoning is kept under the key that call comes back by: message index `answerAt` after
 * the `conversation` the request sent (legacy-replay.ts). names: tool names Anthropic refuses, sent changed (tool-names.ts).
 */
interface State {
  includeUsage: boolean; provider: string; jsonTool?: string; keep?: (id: string, value: string) => void; functionCall: boolean;
  answerAt: number; conversation?: Hash; names?: ToolNameMap;
}

export const chatToMessages: Translator<State> = {
  native: false,
  recallKeys: recallIds,
  request(body, target, opts) {
    const named = upstreamToolNames(withRecalled(body, opts.recalled), ANTHROPIC_TOOL_NAMES);
    let t: ReturnType<typeof chatToMessagesRequest>;
    try {
      t = chatToMessagesRequest(named.body, target);
    } catch (e) {
      throw httpImageRefusalFor(e, opts.driverProtocol, target);
    }
    markTranslated(t.body, opts.cacheAuto); // auto markers; more than Anthropic takes is refused here
    const keep = t.body.thinking ? opts.keep : undefined; // only an answer with thinking has reasoning to keep
    const functionCall = wantsFunctionCall(body);
    const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
    // The messages as the client sent them (not with reasoning put back): the next turn sends them back so.
    const conversation = keep && functionCall ? legacyConversationHash(messages) : undefined;
    const state = { includeUsage: body.stream_options?.include_usage === true, provider: opts.provider, jsonTool: t.jsonTool, keep, functionCall, answerAt: messages.length, conversation, names: named.names };
    return { op: "messages", body: t.body, dropped: t.dropped, state };
  },
  response(json, s) {
    const chat: any = clientToolNames(messagesToChatResponse(json, undefined, s.jsonTool), s.names);
    const m = chat.choices[0].message;
    const calls: { id: string; function: { name: string; arguments: string } }[] = m.tool_calls ?? [];
    const fc = calls[0]?.function; // a legacy answer is its first call
    const ids = !s.functionCall ? calls.map((tc) => tc.id)
      : s.conversation && fc ? [legacyCallKey(s.answerAt, legacyCallHash(s.conversation, fc.name).update(fc.arguments))] : [];
    const kept = s.keep && keptReasoning(ids, m.reasoning_details ?? []);
    if (kept) s.keep!(...kept);
    return s.functionCall ? functionCallAnswer(chat) : chat;
  },
  stream(events, s) {
    if (!s.functionCall) return clientToolNamesStream(messagesToChatStream(events, s), s.names);
    if (!s.keep || !s.conversation) return functionCallStream(clientToolNamesStream(messagesToChatStream(events, s), s.names));
    // The reasoning is kept once the call's arguments have all gone by, under its legacy key.
    let reasoning: string | undefined;
    const chat = clientToolNamesStream(messagesToChatStream(events, { ...s, keep: (_id, value) => { reasoning = value; } }), s.names);
    return keepingLegacyReasoning(functionCallStream(chat), s.answerAt, s.conversation, () => reasoning, s.keep);
  },
  error: (err) => err,
};
