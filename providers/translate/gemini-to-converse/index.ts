// Gemini client -> Bedrock Converse upstream: Gemini -> chat chained with chat -> Converse, so each wire mapping is
// written once. Usage is reported by the inner half. What the inner half drops is named as the Gemini client sent it.
import { chainTranslators } from "../chain.ts";
import { geminiToChatFor } from "../gemini-to-chat/index.ts";
import { GEMINI_FIELD, withGeminiFields } from "../gemini-to-chat/fields.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

export const geminiToConverse = withGeminiFields(chainTranslators(geminiToChatFor("converse"), chatToConverse, GEMINI_FIELD));
