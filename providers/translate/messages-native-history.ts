// The conversation a Messages upstream (Anthropic, Claude on Vertex or Bedrock) takes from a Messages client: without
// what the gateway put in it for other upstreams — thinking blocks it signed for a translated model or any unsigned
// (Anthropic refuses both; thinking goes off and is named when the tool loop then lacks it), Gemini's thought
// signatures in tool ids — and with tool ids another host issued (a chat upstream's `functions.get_weather:0`, given
// to the client as its tool_use id) made of the characters Anthropic takes (foreign-tool-id.ts), as chat → Anthropic
// does. One function, so a generation and its token count see the same conversation.
import { withoutGatewayThinking } from "./messages-to-chat/reasoning.ts";
import { messagesWithoutToolIdSignatures } from "./tool-id-signatures.ts";
import { safeToolId } from "./foreign-tool-id.ts";

/** The body a native Messages upstream takes, and the fields that had to go (for x-mg-dropped-params). */
export function nativeMessagesHistory(body: any): { body: any; dropped: string[] } {
  return withoutGatewayThinking(messagesWithSafeToolIds(messagesWithoutToolIdSignatures(body)));
}

/**
 * tool_use ids and tool_result tool_use_ids rewritten alike (so each result still pairs with its call) where they
 * hold a character Anthropic refuses; the same body when none does (the common case), else a copy.
 */
export function messagesWithSafeToolIds(body: any): any {
  const messages = body?.messages;
  const foreign = (b: any) => (b?.type === "tool_use" && safeToolId(b.id) !== b.id) || (b?.type === "tool_result" && safeToolId(b.tool_use_id) !== b.tool_use_id);
  const holds = (m: any) => Array.isArray(m?.content) && m.content.some(foreign);
  if (!Array.isArray(messages) || !messages.some(holds)) return body;
  return {
    ...body,
    messages: messages.map((m: any) => !holds(m) ? m : {
      ...m,
      content: m.content.map((b: any) => !foreign(b) ? b : b.type === "tool_use" ? { ...b, id: safeToolId(b.id) } : { ...b, tool_use_id: safeToolId(b.tool_use_id) }),
    }),
  };
}
