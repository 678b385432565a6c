// Responses client -> Gemini upstream: responses -> chat chained with chat -> Gemini, so each wire mapping is written
// once. Usage is reported by the inner half.
import { chainTranslators } from "../chain.ts";
import { responsesToChat } from "../responses-to-chat/index.ts";
import { chatToGemini } from "../chat-to-gemini/index.ts";

export const responsesToGemini = chainTranslators(responsesToChat, chatToGemini);
