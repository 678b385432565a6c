// Messages client -> Gemini upstream: messages -> chat chained with chat -> Gemini, so each wire mapping is written
// once. Usage is reported by the chat -> Gemini half.
import { chainTranslators } from "../chain.ts";
import { messagesToChatFor } from "../messages-to-chat/index.ts";
import { chatToGemini } from "../chat-to-gemini/index.ts";

export const messagesToGemini = chainTranslators(messagesToChatFor("gemini"), chatToGemini);
