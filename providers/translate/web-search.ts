// Chat's `web_search_options` (OpenAI's search request on chat completions; also what responses-to-chat makes of a
// Responses `web_search` tool) as the web search an upstream runs itself:
// - Anthropic: the `web_search_20250305` server tool (domain filters and the approximate user location carried over;
//   search_context_size has no counterpart and is reported dropped), always with max_uses: each search is billed and
//   chat has no limit of its own, so the gateway's ceiling (DEFAULT_WEB_SEARCH_USES, what the budget reserves) goes
//   with it; a Responses request's max_tool_calls replaces it (responses-to-messages);
// - Gemini: the `googleSearch` tool, only when the request has no function declarations: Gemini 2.x refuses the two
//   together ("Tool use with function calling is unsupported by the model"), so there the search is dropped and
//   reported rather than failing every request of an agent that always sends both.

import { DEFAULT_WEB_SEARCH_USES } from "../../core/metering/server-tools.ts";

/** The field named in x-mg-dropped-params when the search cannot go along. */
export const WEB_SEARCH_FIELD = "web_search_options";

const options = (body: any): Record<string, any> | undefined => {
  const o = body?.web_search_options;
  return o && typeof o === "object" && !Array.isArray(o) ? o : undefined;
};

export function anthropicWebSearch(body: any, dropped: string[]): Record<string, unknown> | undefined {
  const o = options(body);
  if (!o) return undefined;
  const tool: Record<string, unknown> = { type: "web_search_20250305", name: "web_search", max_uses: DEFAULT_WEB_SEARCH_USES };
  const loc = o.user_location?.approximate;
  if (loc && typeof loc === "object") {
    const where: Record<string, unknown> = { type: "approximate" };
    for (const k of ["city", "region", "country", "timezone"]) if (typeof loc[k] === "string" && loc[k]) where[k] = loc[k];
    if (Object.keys(where).length > 1) tool.user_location = where;
  }
  if (Array.isArray(o.allowed_domains) && o.allowed_domains.length) tool.allowed_domains = o.allowed_domains;
  if (o.search_context_size !== undefined) dropped.push(`${WEB_SEARCH_FIELD}.search_context_size`);
  return tool;
}

/** Gemini's search tool, or undefined (reported dropped when functions are declared too). */
export function geminiWebSearch(body: any, hasFunctions: boolean, dropped: string[]): Record<string, unknown> | undefined {
  if (!options(body)) return undefined;
  if (hasFunctions) {
    dropped.push(WEB_SEARCH_FIELD);
    return undefined;
  }
  return { googleSearch: {} };
}

/**
 * A Responses request's max_tool_calls (the built-in tool calls it allows; web search is the only built-in a
 * translated upstream runs) as the max_uses of the Anthropic search tool the translation made; 0 leaves the tool out.
 */
export function limitAnthropicSearches(tools: unknown, maxToolCalls: unknown): unknown {
  if (!Array.isArray(tools) || typeof maxToolCalls !== "number" || !(maxToolCalls >= 0)) return tools;
  const uses = Math.floor(maxToolCalls);
  const isSearch = (t: any) => t?.type === "web_search_20250305";
  if (uses === 0) return tools.filter((t) => !isSearch(t));
  return tools.map((t) => (isSearch(t) ? { ...t, max_uses: uses } : t));
}
