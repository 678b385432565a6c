// The identity pair: the client's protocol is the upstream's. Passthrough, except that cache_control markers are
// stripped from chat requests to anything but Anthropic (other upstreams may reject the unknown field), tool-call ids
// a Gemini model made lose the signature they carry (tool-id-signatures.ts: OpenAI refuses long ids), and
// reasoning the gateway encoded for a translated upstream is taken out (the native upstream cannot verify it). For responses it
// is the native passthrough to an upstream that serves /responses (catalog `native_responses`).
import type { ClientProtocol, Translator } from "../../../core/contracts/translator.ts";
import { stripChatCacheMarkers } from "../../../core/prompt-cache/markers.ts";
import { withoutGatewayReasoning } from "../responses-to-chat/reasoning.ts";
import { nativeMessagesHistory } from "../messages-native-history.ts";
import { chatWithoutToolIdSignatures, responsesWithoutToolIdSignatures } from "../tool-id-signatures.ts";

export function identity(client: Exclude<ClientProtocol, "gemini">): Translator<undefined> {
  return {
    native: true,
    request(body, _target, opts) {
      // Reasoning the gateway encoded for a translated upstream cannot be verified by a native one (responses-to-chat/reasoning.ts).
      if (client === "responses") return { op: client, ...withoutGatewayReasoning(responsesWithoutToolIdSignatures(body)), state: undefined };
      // Likewise the thinking blocks it made for a translated Messages upstream (messages-native-history.ts).
      if (client === "messages") return { op: client, ...nativeMessagesHistory(body), state: undefined };
      const strip = client === "chat" && opts.cacheMarkers && opts.driverProtocol !== "anthropic";
      const out = client === "chat" ? chatWithoutToolIdSignatures(body) : body;
      return { op: client, body: strip ? stripChatCacheMarkers(out) : out, dropped: [], state: undefined };
    },
    response: (json) => json,
    stream: (events) => events,
    error: (err) => err,
  };
}
