// Responses client -> Messages upstream: responses -> chat chained with chat -> messages, so each wire mapping is
// written once. Usage is reported by the inner half or the driver. The outer half knows its chat body goes on to
// Anthropic: reasoning items made by a messages upstream replay as signed thinking blocks. A knob the inner half
// reports dropped, or a field it refuses, is named the way the Responses client sent it. The request's max_tool_calls holds the web search
// Claude runs to it (max_uses): it is what the budget reserved.
import type { Translator } from "../../../core/contracts/translator.ts";
import { chainTranslators } from "../chain.ts";
import { responsesToChatFor } from "../responses-to-chat/index.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";
import { limitAnthropicSearches } from "../web-search.ts";

const chained = chainTranslators(responsesToChatFor("messages"), chatToMessages);

export const responsesToMessages: Translator = {
  ...chained,
  request(body, target, opts) {
    const t = chained.request(body, target, opts);
    const out = t.body as Record<string, unknown>;
    if (Array.isArray(out.tools) && body?.max_tool_calls !== undefined) {
      out.tools = limitAnthropicSearches(out.tools, body.max_tool_calls);
      if (!(out.tools as unknown[]).length) {
        delete out.tools;
        delete out.tool_choice;
      }
    }
    return t;
  },
};
