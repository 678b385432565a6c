// Gemini client -> Messages upstream (Anthropic, Claude on Vertex and Bedrock InvokeModel): Gemini -> chat chained
// with chat -> messages, so each wire mapping is written once. Usage is reported by the driver. The outer half knows
// its chat body goes on to Anthropic: signed thinking blocks replay from the thoughtSignatures that carried them.
// What the inner half turns off with thinking on or off (thinking itself, sampling), or refuses, is named as the
// Gemini client sent it.
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { geminiToChatFor } from "../gemini-to-chat/index.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";

export const geminiToMessages: Translator = chainTranslators(geminiToChatFor("messages"), chatToMessages);
