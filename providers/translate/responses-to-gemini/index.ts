// Responses client -> Gemini upstream: responses -> chat chained with chat -> Gemini, so each wire mapping is written
// once. Usage is reported by the inner half. The outer half knows its chat body goes on to Gemini (reasoning.summary
// asks for thought text; thought signatures ride in call_id).
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { responsesToChatFor } from "../responses-to-chat/index.ts";
import { chatToGemini } from "../chat-to-gemini/index.ts";

export const responsesToGemini: Translator = chainTranslators(responsesToChatFor("gemini"), chatToGemini);
