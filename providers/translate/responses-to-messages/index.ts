// Responses client -> Messages upstream: responses -> chat composed with chat-to-messages, so each wire mapping is written
// once (as messages-to-gemini composes). Usage is reported by the inner half or the driver.
import type { Translator } from "../../../core/contracts/translator.ts";
import { responsesToChat } from "../responses-to-chat/index.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";

type StateOf<T> = T extends Translator<infer S> ? S : never;
type State = [outer: StateOf<typeof responsesToChat>, inner: StateOf<typeof chatToMessages>];

export const responsesToMessages: Translator<State> = {
  native: false,
  request(body, target, opts) {
    const a = responsesToChat.request(body, target, opts);
    const b = chatToMessages.request(a.body, target, opts);
    return { op: b.op, body: b.body, dropped: [...a.dropped, ...b.dropped], state: [a.state, b.state] };
  },
  response: (json, [a, b], call) => responsesToChat.response(chatToMessages.response(json, b, call), a, call),
  stream: (events, [a, b], call) => responsesToChat.stream(chatToMessages.stream(events, b, call), a, call),
  error: (err, [a, b]) => responsesToChat.error(chatToMessages.error(err, b), a),
};
