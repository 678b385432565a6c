// A Messages count_tokens body as the Gemini request a generation would send (messages -> chat -> Gemini), for
// Gemini's and Vertex's countTokens. A refusal names the field the Messages client sent, as a generation's does.
import type { Target } from "../../../core/contracts/provider.ts";
import { messagesToChatRequest } from "../messages-to-chat/request.ts";
import { chatToGeminiRequest } from "../chat-to-gemini/request.ts";
import { forClient } from "../client-names.ts";
import { GEMINI_TOOL_NAMES, upstreamToolNames } from "../tool-names.ts";

export function messagesAsGeminiRequest(body: unknown, target: Target): Record<string, unknown> {
  const chat = messagesToChatRequest(body).body;
  try {
    return chatToGeminiRequest(upstreamToolNames(chat, GEMINI_TOOL_NAMES).body, target).body; // counted as a generation sends it
  } catch (e) {
    throw forClient(e, chat);
  }
}
