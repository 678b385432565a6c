// Server tools: tools the provider runs itself inside one request (Anthropic's web_search, its MCP connector, OpenAI
// Responses' built-in web_search…), passed through to a native upstream. Each web search is billed per use (catalog
// `web_search`), and their results enter the model's context as input tokens the request body never held.
// The budget reserves for both; a request that leaves the number of searches open gets a ceiling.
import type { AskingProtocol } from "./output-limit.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { maxToolRounds } from "./model-turns.ts";
import { mayRunUnapproved } from "../responses/mcp-tool-rules.ts";

/** Searches allowed when a budgeted request enables web search without a limit of its own. */
export const DEFAULT_WEB_SEARCH_USES = 10;

/** Anthropic server tools: run by Anthropic, their results added to the context (mcp_toolset: the MCP connector's). */
const ANTHROPIC_SERVER = /^(web_search_|web_fetch_|code_execution_|mcp_toolset$)/;
const ANTHROPIC_SEARCH = /^web_search_/;
/** Anthropic server tools that take max_uses, the most calls Anthropic lets the model make of them. */
const ANTHROPIC_COUNTED = /^(web_search_|web_fetch_)/;
/**
 * Responses tool types the client runs (its own functions; Codex's shell and patch tools; computer use's actions):
 * their results come back in the next request's body, so they loop nowhere within one call.
 */
const RESPONSES_CLIENT_RUN = new Set(["function", "custom", "local_shell", "shell", "apply_patch", "computer_use_preview", "computer_use"]);
/** Responses built-in tool types that search the web (GA and preview names). */
const RESPONSES_SEARCH = /^web_search/;

const tools = (body: any): any[] => (Array.isArray(body?.tools) ? body.tools : []);

/** The largest max_uses / max_tool_calls the request schemas take (schemas/api/messages, responses). */
const MAX_STATED_LIMIT = 2_147_483_647;
/**
 * The limit a request states on a counted tool or call total (a whole number, as the schemas require), else
 * undefined: a body that skipped them (1e300, 1.5) is read as stating none, bounded by the gateway, never as a
 * count of calls to reserve.
 */
const limit = (n: unknown): number | undefined => (typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_STATED_LIMIT ? n : undefined);

/**
 * Messages' MCP connector: Anthropic connects to these servers and runs their tools in a loop within the one call
 * (every tool with mcp-client-2025-04-04; those an mcp_toolset names with mcp-client-2025-11-20).
 */
const mcpConnector = (body: any): boolean => Array.isArray(body?.mcp_servers) && body.mcp_servers.length > 0;

/** Chat's web search request (translated for Claude and Gemini, which then search themselves). */
const chatSearch = (body: any): boolean => body?.web_search_options !== null && typeof body?.web_search_options === "object";

/**
 * Responses tools that can make the upstream pass over the context again within the call: every built-in tool but an
 * `mcp` tool none of whose calls can run unapproved (require_approval "always", or an object form requiring it for
 * every tool): OpenAI ends the response at its first mcp_approval_request, so it adds no pass (model-turns.ts
 * counts such a request as one turn the same way).
 */
const responsesLooping = (body: any): boolean =>
  tools(body).some((t) => typeof t?.type === "string" && !RESPONSES_CLIENT_RUN.has(t.type) && (t.type !== "mcp" || mayRunUnapproved(t)));

/** The request enables a tool whose results the provider adds to the context (so input is not bounded by the body). */
export function usesServerTools(body: any, client: AskingProtocol): boolean {
  if (client === "messages") return mcpConnector(body) || tools(body).some((t) => typeof t?.type === "string" && ANTHROPIC_SERVER.test(t.type));
  if (client === "responses") return tools(body).some((t) => typeof t?.type === "string" && !RESPONSES_CLIENT_RUN.has(t.type));
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
      if (limit(t.max_uses) === undefined) t.max_uses = DEFAULT_WEB_SEARCH_USES;
      n += t.max_uses;
    }
    return n;
  }
  if (client === "responses") {
    if (!tools(body).some((t) => typeof t?.type === "string" && RESPONSES_SEARCH.test(t.type))) return 0;
    if (limit(body.max_tool_calls) === undefined) body.max_tool_calls = DEFAULT_WEB_SEARCH_USES;
    return body.max_tool_calls;
  }
  if (client === "chat") return chatSearch(body) ? DEFAULT_WEB_SEARCH_USES : 0;
  return 0;
}


export interface ServerToolRounds {
  /** Passes over the context one upstream call may make after its first (0: no server tools). */
  rounds: number;
  /**
   * Where the client states a smaller limit, when every server tool the request enables takes one (Messages: max_uses
   * on each web_search / web_fetch tool; Responses: max_tool_calls); absent when one does not (code execution, Claude's
   * MCP connector, chat's web_search_options, Gemini's built-in tools), whose rounds the gateway's ceiling bounds.
   */
  limitField?: "max_uses" | "max_tool_calls";
}

/**
 * How many times more than once one upstream call may pass over the context because of its server tools: each call
 * of one (a search, a fetch, an MCP tool's) adds its result and another pass, all in one usage. Both the budget's
 * reservation and the meter's usage ceiling read this, so a request never settles above what it reserved. The
 * request's own limit when every server tool it enables has one (Anthropic's max_uses, summed over its tools;
 * Responses' max_tool_calls, which counts every built-in tool's calls): a client lowers its hold by stating a smaller
 * one. Otherwise the gateway's ceiling: DEFAULT_WEB_SEARCH_USES or mcp.max_tool_rounds, whichever is larger, and no
 * less than the limits stated. (A budgeted search without a limit was given DEFAULT_WEB_SEARCH_USES by
 * boundWebSearches before this runs, and sent with it.)
 */
export function serverToolRounds(body: any, client: AskingProtocol, config: Pick<RuntimeConfig, "raw">): ServerToolRounds {
  if (!usesServerTools(body, client) || (client === "responses" && !responsesLooping(body))) return { rounds: 0 };
  // stated: the limits the request states; open: a server tool without one (then the gateway's ceiling bounds it);
  // uncountable: one that takes none (the client cannot lower the rounds by a field).
  let stated = 0;
  let open = false;
  let uncountable = false;
  let limitField: ServerToolRounds["limitField"];
  if (client === "messages") {
    open = uncountable = mcpConnector(body);
    for (const t of tools(body)) {
      if (typeof t?.type !== "string" || !ANTHROPIC_SERVER.test(t.type)) continue;
      const counted = ANTHROPIC_COUNTED.test(t.type);
      const n = counted ? limit(t.max_uses) : undefined;
      if (!counted) uncountable = true;
      if (n === undefined) open = true;
      else stated += n;
    }
    limitField = "max_uses";
  } else if (client === "responses") {
    const n = limit(body?.max_tool_calls);
    if (n === undefined) open = true;
    else stated = n;
    limitField = "max_tool_calls";
  } else {
    open = uncountable = true; // chat's web_search_options, Gemini's built-in tools: no limit of their own
  }
  const rounds = open ? Math.max(maxToolRounds(config), DEFAULT_WEB_SEARCH_USES, stated) : stated;
  return uncountable ? { rounds } : { rounds, limitField };
}
