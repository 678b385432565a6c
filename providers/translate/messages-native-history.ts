// The conversation a Messages upstream (Anthropic, Claude on Vertex or Bedrock) takes from a Messages client: without
// what the gateway put in it for other upstreams — thinking blocks it signed for a translated model or any unsigned
// (Anthropic refuses both; thinking goes off and is named when the tool loop then lacks it), and Gemini's thought
// signatures in tool ids. One function, so a generation and its token count see the same conversation.
import { withoutGatewayThinking } from "./messages-to-chat/reasoning.ts";
import { messagesWithoutToolIdSignatures } from "./tool-id-signatures.ts";

/** The body a native Messages upstream takes, and the fields that had to go (for x-mg-dropped-params). */
export function nativeMessagesHistory(body: any): { body: any; dropped: string[] } {
  return withoutGatewayThinking(messagesWithoutToolIdSignatures(body));
}
