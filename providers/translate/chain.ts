// Two translators in a row (client -> chat -> upstream), so each wire mapping is written once: the outer one maps the
// client protocol to chat, the inner one chat to the upstream's protocol. Usage is reported by the inner half. What the
// inner half drops it names as chat spells it; `clientNames` (the outer protocol's, e.g. reasoning_effort ->
// reasoning.effort for Responses clients) names it in x-mg-dropped-params as the client sent it.
import type { Translator } from "../../core/contracts/translator.ts";

export function chainTranslators<A, B>(outer: Translator<A>, inner: Translator<B>, clientNames: Readonly<Record<string, string>> = {}): Translator<[outer: A, inner: B]> {
  return {
    native: false,
    request(body, target, opts) {
      const a = outer.request(body, target, opts);
      const b = inner.request(a.body, target, opts);
      const dropped = [...new Set([...a.dropped, ...b.dropped.map((d) => clientNames[d] ?? d)])];
      // Only the inner half's body is sent: what it must download first is the chain's to download.
      return { op: b.op, body: b.body, dropped, state: [a.state, b.state], ...(b.download ? { download: b.download } : {}) };
    },
    response: (json, [a, b], call) => outer.response(inner.response(json, b, call), a, call),
    stream: (events, [a, b], call) => outer.stream(inner.stream(events, b, call), a, call),
    error: (err, [a, b]) => outer.error(inner.error(err, b), a),
  };
}
