// Server tools: tools the provider runs itself inside one request (Anthropic's web_search, its MCP connector, OpenAI
// Responses' built-in web_search…), passed through to a native upstream. Each web search is billed per use (catalog
// `web_search`), and their results enter the model's context as input tokens the request body never held.
// The budget reserves for both; a request that leaves the number of searches open gets a ceiling.
import type { AskingProtocol } from "./output-limit.ts";

/** Searches allowed when a budgeted request enables web search without a limit of its own. */
export const DEFAULT_WEB_SEARCH_USES = 10;

/** Anthropic server tools: run by Anthropic, their results added to the context (mcp_toolset: the MCP connector's). */
const ANTHROPIC_SERVER = /^(web_search_|web_fetch_|code_execution_|mcp_toolset$)/;
const ANTHROPIC_SEARCH = /^web_search_/;
/** Responses built-in tool types that search the web (GA and preview names). */
const RESPONSES_SEARCH = /^web_search/;

const tools = (body: any): any[] => (Array.isArray(body?.tools) ? body.tools : []);

/**
 * Messages' MCP connector: Anthropic connects to these servers and runs their tools in a loop within the one call
 * (every tool with mcp-client-2025-04-04; those an mcp_toolset names with mcp-client-2025-11-20).
 */
const mcpConnector = (body: any): boolean => Array.isArray(body?.mcp_servers) && body.mcp_servers.length > 0;

/** Chat's web search request (translated for Claude and Gemini, which then search themselves). */
const chatSearch = (body: any): boolean => body?.web_search_options !== null && typeof body?.web_search_options === "object";

/** The request enables a tool whose results the provider adds to the context (so input is not bounded by the body). */
export function usesServerTools(body: any, client: AskingProtocol): boolean {
  if (client === "messages") return mcpConnector(body) || tools(body).some((t) => typeof t?.type === "string" && ANTHROPIC_SERVER.test(t.type));
  if (client === "responses") return tools(body).some((t) => typeof t?.type === "string" && t.type !== "function" && t.type !== "custom");
  if (client === "chat") return chatSearch(body);
  // Gemini's built-in tools (googleSearch, urlContext, codeExecution…): their results are billed as input
  // (toolUsePromptTokenCount). Only function declarations leave the input to the body.
  return tools(body).some((t) => t && typeof t === "object" && Object.keys(t).some((k) => k !== "functionDeclarations" && k !== "function_declarations"));
}

/**
 * The most web searches the request can run: Anthropic's max_uses per web_search tool, or the Responses request's
 * max_tool_calls. A search tool without a limit gets DEFAULT_WEB_SEARCH_USES written into the body, which the
 * upstream then enforces: otherwise nothing bounds what the request can cost. Chat's web_search_options has no
 * limit of its own: translated for Claude it always carries DEFAULT_WEB_SEARCH_USES (providers/translate/web-search.ts),
 * and a Responses search translated for Claude carries max_tool_calls as its max_uses.
 */
export function boundWebSearches(body: any, client: AskingProtocol): number {
  if (client === "messages") {
    let n = 0;
    for (const t of tools(body)) {
      if (typeof t?.type !== "string" || !ANTHROPIC_SEARCH.test(t.type)) continue;
      if (!(typeof t.max_uses === "number" && t.max_uses >= 0)) t.max_uses = DEFAULT_WEB_SEARCH_USES;
      n += Math.ceil(t.max_uses);
    }
    return n;
  }
  if (client === "responses") {
    if (!tools(body).some((t) => typeof t?.type === "string" && RESPONSES_SEARCH.test(t.type))) return 0;
    if (!(typeof body.max_tool_calls === "number" && body.max_tool_calls >= 0)) body.max_tool_calls = DEFAULT_WEB_SEARCH_USES;
    return Math.ceil(body.max_tool_calls);
  }
  if (client === "chat") return chatSearch(body) ? DEFAULT_WEB_SEARCH_USES : 0;
  return 0;
}
