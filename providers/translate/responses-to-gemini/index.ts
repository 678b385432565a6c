// Responses client -> Gemini upstream: responses -> chat chained with chat -> Gemini, so each wire mapping is written
// once. Usage is reported by the inner half. The outer half knows its chat body goes on to Gemini (reasoning.summary
// asks for thought text; thought signatures ride in call_id).
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { responsesToChatFor } from "../responses-to-chat/index.ts";
import { chatToGemini } from "../chat-to-gemini/index.ts";

const chained = chainTranslators(responsesToChatFor("gemini"), chatToGemini);

export const responsesToGemini: Translator = {
  ...chained,
  request(body, target, opts) {
    const t = chained.request(body, target, opts);
    // The chat half never sees service_tier (responses -> chat does not carry it); Gemini has no tiers: say so.
    if (body?.service_tier !== undefined && body.service_tier !== null && !t.dropped.includes("service_tier")) t.dropped.push("service_tier");
    return t;
  },
};
