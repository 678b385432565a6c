// Gemini client -> Messages upstream (Anthropic, Claude on Vertex and Bedrock InvokeModel): Gemini -> chat chained
// with chat -> messages, so each wire mapping is written once. Usage is reported by the driver. The outer half knows
// its chat body goes on to Anthropic: signed thinking blocks replay from the thoughtSignatures that carried them.
// What the inner half turns off with thinking on or off (thinking itself, sampling) is named as the Gemini client sent it.
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { geminiToChatFor } from "../gemini-to-chat/index.ts";
import { withGeminiFields } from "../gemini-to-chat/fields.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";

const chained = withGeminiFields(chainTranslators(geminiToChatFor("messages"), chatToMessages));
const GEMINI_NAME: Record<string, string> = {
  reasoning_effort: "generationConfig.thinkingConfig",
  temperature: "generationConfig.temperature",
  top_p: "generationConfig.topP",
};

export const geminiToMessages: Translator = {
  ...chained,
  request(body, target, opts) {
    const t = chained.request(body, target, opts);
    return { ...t, dropped: t.dropped.map((d) => GEMINI_NAME[d] ?? d) };
  },
};
