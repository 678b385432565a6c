// Responses client -> Bedrock Converse upstream: responses -> chat chained with chat -> Converse, so each wire
// mapping is written once. Usage is reported by the inner half. Converse has no prompt-cache routing key or retention
// (it caches at cachePoint blocks only): the prompt_cache_key / _retention the chat body carries are named dropped.
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { responsesToChat } from "../responses-to-chat/index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

const chained = chainTranslators(responsesToChat, chatToConverse);
const NO_PLACE = ["prompt_cache_key", "prompt_cache_retention"];

export const responsesToConverse: Translator = {
  ...chained,
  request(body, target, opts) {
    const t = chained.request(body, target, opts);
    const named = NO_PLACE.filter((k) => typeof body?.[k] === "string" && body[k] && !t.dropped.includes(k));
    return named.length ? { ...t, dropped: [...t.dropped, ...named] } : t;
  },
};
