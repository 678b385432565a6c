// Two translators in a row (client -> chat -> upstream), so each wire mapping is written once: the outer one maps the
// client protocol to chat, the inner one chat to the upstream's protocol. Usage is reported by the inner half. What
// the inner half drops or refuses it names as chat spells it (tools[0].function.parameters, messages[2].content[0]);
// the client is told the field it sent (tools[0].input_schema, messages[1].content[0]): the outer half marked its chat
// body with how (client-names.ts). A refusal of chat-to-gemini's downloads, made after request(), is named there.
import type { Translator, TranslatedRequest } from "../../core/contracts/translator.ts";
import type { UrlFetchOptions } from "../../core/net/url-fetch.ts";
import { clientName, forClient } from "./client-names.ts";

export function chainTranslators<A, B>(outer: Translator<A>, inner: Translator<B>): Translator<[outer: A, inner: B]> {
  return {
    native: false,
    request(body, target, opts) {
      const a = outer.request(body, target, opts);
      let b: TranslatedRequest<B>;
      try {
        b = inner.request(a.body, target, opts);
      } catch (e) {
        throw forClient(e, a.body);
      }
      const dropped = [...new Set([...a.dropped, ...b.dropped.map((d) => clientName(a.body, d))])];
      // Only the inner half's body is sent: what it must download first is the chain's to download. What the inner
      // half names during it (a block's fields lost to what its URL served) joins the chain's list, named for the client.
      const download = b.download && (async (policy: UrlFetchOptions, signal: AbortSignal) => {
        const seen = b.dropped.length;
        await b.download!(policy, signal);
        for (const d of b.dropped.slice(seen)) {
          const name = clientName(a.body, d);
          if (!dropped.includes(name)) dropped.push(name);
        }
      });
      return { op: b.op, body: b.body, dropped, state: [a.state, b.state], ...(download ? { download } : {}) };
    },
    response: (json, [a, b], call) => outer.response(inner.response(json, b, call), a, call),
    stream: (events, [a, b], call) => outer.stream(inner.stream(events, b, call), a, call),
    error: (err, [a, b]) => outer.error(inner.error(err, b), a),
  };
}
