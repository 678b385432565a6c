// A Responses request's tools for a translated upstream, which has function tools only:
// - a `namespace` tool (Codex groups MCP and its own tools that way: {type:"namespace", name, tools:[function…]}) is
//   flattened into function tools named `<namespace>__<name>`; the calls come back under the names the client knows
//   (`name` plus `namespace`, as the Responses API returns them) — see ToolNames;
// - web search (`web_search`, `web_search_preview`, dated variants) becomes chat's `web_search_options` where the
//   upstream has a search of its own (Anthropic's web_search server tool; Gemini's googleSearch, when no function
//   tools are offered beside it: the chat translators map it on) and is dropped elsewhere; a search restricted to
//   OpenAI's cached index (external_web_access: false) has no equivalent and is dropped too;
// - any other built-in tool (file_search, code_interpreter, image_generation, mcp, computer use, shell, custom, …)
//   cannot run there: dropped and named in x-mg-dropped-params (`tools[i].type=<type>`).
// Only a tool_choice that forces a dropped tool is refused (responses-native-only.ts), since the model cannot obey it.
import { createHash } from "node:crypto";
import type { Origin } from "../client-names.ts";

/** A flat tool name the upstream sees -> the name and namespace the client knows. */
export type ToolNames = Map<string, { name: string; namespace: string }>;

const MAX_NAME = 64; // OpenAI's and Gemini's limit on function names; Anthropic's is larger
const WEB_SEARCH = /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/;

/** The function name a namespaced tool has upstream: deterministic, so history and new calls agree. */
export function flatName(namespace: string, name: string): string {
  const flat = `${namespace}__${name}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (flat.length <= MAX_NAME) return flat;
  const hash = createHash("sha256").update(`${namespace}\u0000${name}`).digest("hex").slice(0, 8);
  return `${flat.slice(0, MAX_NAME - 9)}_${hash}`;
}

/** A function tool or call's name as the upstream sees it (flattened when it belongs to a namespace). */
export const upstreamName = (item: { name?: unknown; namespace?: unknown }): string =>
  typeof item.namespace === "string" && item.namespace ? flatName(item.namespace, String(item.name ?? "")) : String(item.name ?? "");

/** A call's name back in the client's terms: `{name}` or `{name, namespace}`. */
export function clientName(names: ToolNames | undefined, name: string): { name: string; namespace?: string } {
  const known = names?.get(name);
  return known ? { name: known.name, namespace: known.namespace } : { name };
}

export const isWebSearch = (type: unknown): boolean => typeof type === "string" && WEB_SEARCH.test(type);

/** Is this a tool a translated upstream can be handed (a function, or a namespace of them)? */
const isFunctionLike = (t: any) => t?.type === "function" || t?.type === "namespace";

export interface ChatTools {
  tools: Record<string, unknown>[];
  names: ToolNames;
  /** Chat's web search request, for upstreams that search (Anthropic, Gemini). */
  webSearch?: Record<string, unknown>;
  dropped: string[];
}

function functionTool(t: any, name: string, origin: Origin | undefined): Record<string, unknown> {
  const tool = {
    type: "function",
    function: { name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: "object", properties: {} }, ...(typeof t.strict === "boolean" ? { strict: t.strict } : {}) },
  };
  origin?.(tool, t);
  return tool;
}

/** chat's web_search_options from a Responses web search tool (user_location and domain filters carried over). */
function webSearchOptions(t: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const loc = t.user_location;
  if (loc && typeof loc === "object") {
    const approximate: Record<string, unknown> = {};
    for (const k of ["city", "region", "country", "timezone"]) if (typeof loc[k] === "string" && loc[k]) approximate[k] = loc[k];
    if (Object.keys(approximate).length) out.user_location = { type: "approximate", approximate };
  }
  if (typeof t.search_context_size === "string") out.search_context_size = t.search_context_size;
  const allowed = t.filters?.allowed_domains;
  if (Array.isArray(allowed) && allowed.length) out.allowed_domains = allowed.filter((d: unknown) => typeof d === "string");
  return out;
}

/**
 * Whether the upstream the chat body goes on to runs a web search itself: "yes" (Anthropic), "alone" (Gemini: only
 * without function tools beside it, which Gemini 2.x refuses), "no". `allowed`: the names (and built-in types)
 * tool_choice allowed_tools keeps; undefined = every tool. `origin` is told which tool each function tool was made of.
 */
export function chatTools(tools: unknown, searches: "yes" | "alone" | "no", allowed?: Set<string>, origin?: Origin): ChatTools {
  const out: ChatTools = { tools: [], names: new Map(), dropped: [] };
  const list: any[] = Array.isArray(tools) ? tools : [];
  let searchAt = -1;
  list.forEach((t, i) => {
    if (t?.type === "function") {
      if (!allowed || allowed.has(String(t.name))) out.tools.push(functionTool(t, String(t.name ?? ""), origin));
    } else if (t?.type === "namespace" && Array.isArray(t.tools)) {
      t.tools.forEach((f: any, j: number) => {
        if (f?.type !== "function") {
          out.dropped.push(`tools[${i}].tools[${j}].type=${String(f?.type)}`);
          return;
        }
        const flat = flatName(String(t.name ?? ""), String(f.name ?? ""));
        out.names.set(flat, { name: String(f.name ?? ""), namespace: String(t.name ?? "") });
        if (!allowed || allowed.has(flat) || allowed.has(namespaceKey(t.name))) out.tools.push(functionTool(f, flat, origin));
      });
    } else if (isWebSearch(t?.type) && searches !== "no" && t.external_web_access !== false) {
      if (!allowed || allowed.has(t.type)) {
        out.webSearch = webSearchOptions(t);
        searchAt = i;
      }
    } else {
      out.dropped.push(`tools[${i}].type=${String(t?.type)}`);
    }
  });
  if (out.webSearch && searches === "alone" && out.tools.length) {
    out.webSearch = undefined;
    out.dropped.push(`tools[${searchAt}].type=${String(list[searchAt]?.type)}`);
  }
  return out;
}

/**
 * The tool a tool_choice forces that this upstream cannot run, as a field and value to refuse with, or undefined.
 * Forcing a function (namespaced or not) translates; so does allowed_tools keeping at least one function; a choice
 * forcing a built-in tool (web_search, file_search, …) or allowing only built-ins with mode "required" does not.
 */
export function forcedBuiltIn(body: any): { field: string; value: string } | undefined {
  const choice = body?.tool_choice;
  if (!choice || typeof choice !== "object" || choice.type === "function") return undefined;
  if (choice.type === "allowed_tools") {
    const kept: any[] = Array.isArray(choice.tools) ? choice.tools : [];
    if (choice.mode !== "required" || kept.some(isFunctionLike)) return undefined;
    return { field: "tool_choice.tools", value: kept.map((t) => String(t?.type)).join(",") || "none" };
  }
  return { field: "tool_choice.type", value: String(choice.type) };
}

const namespaceKey = (name: unknown) => `namespace:${String(name)}`;

/** An allowed_tools entry as chatTools' `allowed` knows it: a function's upstream name, a whole namespace, a type. */
export function allowedKey(t: any): string {
  if (t?.type === "function") return upstreamName(t);
  if (t?.type === "namespace") return namespaceKey(t.name);
  return String(t?.type);
}
