// Gemini client -> Bedrock Converse upstream: Gemini -> chat chained with chat -> Converse, so each wire mapping is
// written once. Usage is reported by the inner half. What the inner half drops or refuses is named as the Gemini
// client sent it.
import { chainTranslators } from "../chain.ts";
import { geminiToChatFor } from "../gemini-to-chat/index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

export const geminiToConverse = chainTranslators(geminiToChatFor("converse"), chatToConverse);
