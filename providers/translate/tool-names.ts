// Each upstream takes its own tool names: a name valid where the client sent it (a Gemini client's
// `github.search_issues`, a Messages client's 100-character name) is refused by another upstream with a 400. A
// translated chat body's names the upstream would refuse are sent as safe names (refused characters replaced, cut,
// plus a hash of the original, so `a.b` and a real `a_b` stay apart: LiteLLM's mapping, protocols.md §3.4), wherever
// they stand (tools, tool_choice, the history's calls), and the answer's calls get the client's names back. The name
// is worked out the same way every turn, so a replayed call still matches its tool. A request whose names all pass
// is sent as it is (the common case: nothing is copied).
import { createHash } from "node:crypto";
import type { SseEvent } from "../../core/sse/parse.ts";

export interface ToolNameRule {
  /** A name of only characters the upstream takes. */
  readonly allowed: RegExp;
  /** Characters it refuses (global, for replace). */
  readonly refused: RegExp;
  /** The longest name it takes. */
  readonly max: number;
  /** What a name must start with, where the upstream says (Gemini: a letter or an underscore). */
  readonly start?: RegExp;
}

/** OpenAI chat: `^[a-zA-Z0-9_-]{1,64}$` (protocols.md §1); other chat hosts are held to it too. */
export const OPENAI_TOOL_NAMES: ToolNameRule = { allowed: /^[A-Za-z0-9_-]+$/, refused: /[^A-Za-z0-9_-]/g, max: 64 };
/** Anthropic (and Claude on Vertex and Bedrock InvokeModel): `^[a-zA-Z0-9_-]{1,128}$`, as its 400 says. */
export const ANTHROPIC_TOOL_NAMES: ToolNameRule = { allowed: /^[A-Za-z0-9_-]+$/, refused: /[^A-Za-z0-9_-]/g, max: 128 };
/** Bedrock Converse toolSpec.name: `[a-zA-Z0-9_-]+`, at most 64. */
export const CONVERSE_TOOL_NAMES: ToolNameRule = { allowed: /^[A-Za-z0-9_-]+$/, refused: /[^A-Za-z0-9_-]/g, max: 64 };
/** Gemini FunctionDeclaration.name: a letter or `_` first, then letters, digits, `_ . : -`, at most 64. */
export const GEMINI_TOOL_NAMES: ToolNameRule = { allowed: /^[A-Za-z0-9_.:-]+$/, refused: /[^A-Za-z0-9_.:-]/g, max: 64, start: /^[A-Za-z_]/ };

/** The upstream's name -> the client's, for the names that were changed. */
export type ToolNameMap = ReadonlyMap<string, string>;

const takes = (rule: ToolNameRule, name: string) =>
  name.length <= rule.max && rule.allowed.test(name) && (!rule.start || rule.start.test(name));

function safeName(name: string, rule: ToolNameRule, hashChars: number): string {
  let base = name.replace(rule.refused, "_");
  if (rule.start && !rule.start.test(base)) base = `_${base}`;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, hashChars);
  return `${base.slice(0, rule.max - hashChars - 1)}_${hash}`;
}

/** Every tool name the chat body carries, wherever chat puts one (legacy functions too: chat-tool-forms.ts). */
function eachName(body: any, visit: (name: unknown) => void): void {
  for (const t of Array.isArray(body.tools) ? body.tools : []) if (t?.type === "function") visit(t.function?.name);
  for (const f of Array.isArray(body.functions) ? body.functions : []) visit(f?.name);
  const choice = body.tool_choice;
  if (choice?.type === "function") visit(choice.function?.name);
  for (const t of Array.isArray(choice?.allowed_tools?.tools) ? choice.allowed_tools.tools : []) if (t?.type === "function") visit(t.function?.name);
  if (body.function_call !== null && typeof body.function_call === "object") visit(body.function_call.name);
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    for (const tc of Array.isArray(m?.tool_calls) ? m.tool_calls : []) visit(tc?.function?.name);
    if (m?.function_call) visit(m.function_call.name);
    if (m?.role === "function") visit(m.name);
  }
}

/**
 * `body` (a chat body made for, or sent by, a translated request) with the names `rule` refuses changed, and the map
 * back; `body` itself (never changed) when every name passes. A copy keeps the body's non-enumerable marks
 * (client-names.ts), so what is refused later is still named as the client sent it.
 */
export function upstreamToolNames<T>(body: T, rule: ToolNameRule): { body: T; names?: ToolNameMap } {
  if (body === null || typeof body !== "object") return { body };
  const kept = new Set<string>();
  const refused = new Set<string>();
  eachName(body, (n) => {
    if (typeof n !== "string" || n === "") return; // no name at all is the upstream's to refuse, as the client sent it
    (takes(rule, n) ? kept : refused).add(n);
  });
  if (!refused.size) return { body };
  const toUpstream = new Map<string, string>();
  const back = new Map<string, string>();
  for (const name of refused) {
    // Never another tool's real name, nor another changed name: a longer hash where the short one meets one.
    let safe = safeName(name, rule, 8);
    for (const chars of [16, 32]) if (kept.has(safe) || back.has(safe)) safe = safeName(name, rule, chars);
    toUpstream.set(name, safe);
    back.set(safe, name);
  }
  return { body: renamed(body, (n) => (typeof n === "string" ? toUpstream.get(n) ?? n : n)), names: back };
}

function renamed<T>(body: T, to: (name: unknown) => unknown): T {
  const src = body as any;
  const out = Object.create(Object.getPrototypeOf(src), Object.getOwnPropertyDescriptors(src));
  const fn = (f: any) => (f && typeof f === "object" ? { ...f, name: to(f.name) } : f);
  const tool = (t: any) => (t?.type === "function" ? { ...t, function: fn(t.function) } : t);
  if (Array.isArray(src.tools)) out.tools = src.tools.map(tool);
  if (Array.isArray(src.functions)) out.functions = src.functions.map(fn);
  const choice = src.tool_choice;
  if (choice?.type === "function") out.tool_choice = tool(choice);
  else if (Array.isArray(choice?.allowed_tools?.tools)) out.tool_choice = { ...choice, allowed_tools: { ...choice.allowed_tools, tools: choice.allowed_tools.tools.map(tool) } };
  if (src.function_call !== null && typeof src.function_call === "object") out.function_call = fn(src.function_call);
  if (Array.isArray(src.messages)) {
    out.messages = src.messages.map((m: any) => {
      if (m === null || typeof m !== "object") return m;
      const calls = Array.isArray(m.tool_calls);
      if (!calls && !m.function_call && m.role !== "function") return m;
      const copy = { ...m };
      if (calls) copy.tool_calls = m.tool_calls.map((tc: any) => (tc && typeof tc === "object" ? { ...tc, function: fn(tc.function) } : tc));
      if (m.function_call) copy.function_call = fn(m.function_call);
      if (m.role === "function") copy.name = to(m.name);
      return copy;
    });
  }
  return out;
}

/** Restores one call's name (`{name}` of a tool call's function, or of a legacy function_call) in place. */
function restore(fn: any, names: ToolNameMap): boolean {
  const original = fn && typeof fn.name === "string" ? names.get(fn.name) : undefined;
  if (original === undefined) return false;
  fn.name = original;
  return true;
}

/** Restores the names in a message or a stream delta in place; true when one changed. */
function restoreIn(m: any, names: ToolNameMap): boolean {
  if (m === null || typeof m !== "object") return false;
  let changed = false;
  for (const tc of Array.isArray(m.tool_calls) ? m.tool_calls : []) changed = restore(tc?.function, names) || changed;
  return restore(m.function_call, names) || changed;
}

/** A chat answer (JSON) with the client's names back on its calls; changed in place. */
export function clientToolNames<T>(answer: T, names: ToolNameMap | undefined): T {
  if (!names) return answer;
  for (const c of Array.isArray((answer as any)?.choices) ? (answer as any).choices : []) restoreIn(c?.message, names);
  return answer;
}

/** A chat stream with the client's names back on its calls (each call's name arrives whole, in its first delta). */
export function clientToolNamesStream(events: AsyncIterable<SseEvent>, names: ToolNameMap | undefined): AsyncIterable<SseEvent> {
  return names ? restoring(events, names) : events;
}

async function* restoring(events: AsyncIterable<SseEvent>, names: ToolNameMap): AsyncGenerator<SseEvent> {
  for await (const ev of events) {
    if (ev.comment !== undefined || !ev.data.includes('"name"')) {
      yield ev;
      continue;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(ev.data);
    } catch {
      yield ev;
      continue;
    }
    let changed = false;
    for (const c of Array.isArray(chunk?.choices) ? chunk.choices : []) changed = restoreIn(c?.delta, names) || changed;
    yield changed ? { ...ev, data: JSON.stringify(chunk) } : ev;
  }
}
