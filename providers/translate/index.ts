// Every (client protocol, upstream protocol) pair that exists, handed to core by the composition root.
import type { Translators } from "../../core/contracts/translator.ts";
import { identity } from "./identity/index.ts";
import { chatToMessages } from "./chat-to-messages/index.ts";
import { chatToGemini } from "./chat-to-gemini/index.ts";
import { messagesToChat } from "./messages-to-chat/index.ts";
import { messagesToGemini } from "./messages-to-gemini/index.ts";
import { responsesToChat } from "./responses-to-chat/index.ts";
import { responsesToMessages } from "./responses-to-messages/index.ts";
import { responsesToGemini } from "./responses-to-gemini/index.ts";
import { chatToConverse } from "./chat-to-converse/index.ts";
import { messagesToConverse } from "./messages-to-converse/index.ts";
import { responsesToConverse } from "./responses-to-converse/index.ts";
import { nativeOnly } from "./responses-native-only.ts";
import { geminiNative } from "./gemini-native/index.ts";
import { geminiToChat } from "./gemini-to-chat/index.ts";
import { geminiToMessages } from "./gemini-to-messages/index.ts";
import { geminiToConverse } from "./gemini-to-converse/index.ts";
import { inliningClaudeUrls } from "./claude-url-sources.ts";

// Every pair to a Messages upstream downloads URL sources for Claude on Bedrock and Vertex, which fetch none.
export const translators: Translators = {
  chat: { chat: identity("chat"), messages: inliningClaudeUrls(chatToMessages), gemini: chatToGemini, converse: chatToConverse },
  messages: { messages: inliningClaudeUrls(identity("messages")), chat: messagesToChat, gemini: messagesToGemini, converse: messagesToConverse },
  gemini: { gemini: geminiNative, chat: geminiToChat, messages: inliningClaudeUrls(geminiToMessages), converse: geminiToConverse },
  responses: { responses: identity("responses"), chat: nativeOnly(responsesToChat), messages: inliningClaudeUrls(nativeOnly(responsesToMessages)), gemini: nativeOnly(responsesToGemini), converse: nativeOnly(responsesToConverse) },
};
