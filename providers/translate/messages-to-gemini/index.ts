// Messages client -> Gemini upstream: messages -> chat composed with chat -> Gemini, so each wire mapping is
// written once. Usage is reported by the chat -> Gemini half.
import type { Translator } from "../../../core/contracts/translator.ts";
import { messagesToChat } from "../messages-to-chat/index.ts";
import { chatToGemini } from "../chat-to-gemini/index.ts";

type StateOf<T> = T extends Translator<infer S> ? S : never;
type State = [outer: StateOf<typeof messagesToChat>, inner: StateOf<typeof chatToGemini>];

export const messagesToGemini: Translator<State> = {
  native: false,
  request(body, target, opts) {
    const a = messagesToChat.request(body, target, opts);
    const b = chatToGemini.request(a.body, target, opts);
    return { op: b.op, body: b.body, dropped: [...a.dropped, ...b.dropped], state: [a.state, b.state] };
  },
  response: (json, [a, b], call) => messagesToChat.response(chatToGemini.response(json, b, call), a, call),
  stream: (events, [a, b], call) => messagesToChat.stream(chatToGemini.stream(events, b, call), a, call),
  error: (err, [a, b]) => messagesToChat.error(chatToGemini.error(err, b), a),
};
