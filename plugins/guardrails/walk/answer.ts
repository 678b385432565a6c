// Where an answer's text is, per client protocol (JSON answers, and the whole responses some stream events carry):
// message text, refusals and the tool calls the model made. Reasoning is left as it is: it is signed or encrypted
// alongside (Claude's thinking, Gemini's thought signatures, Responses' encrypted reasoning), and clients send it back.
// A Messages block of a type the gateway does not know (a beta's compaction, a new type) reaches the client as Claude
// sent it, so every string in it is answer text.
import type { ClientProtocol } from "../../../core/pipeline/context.ts";
import { visitJsonString, visitJsonValue, type Visit } from "./json-text.ts";
import { KNOWN_MESSAGES_BLOCKS, KNOWN_NESTED_BLOCKS, unknownBlockStrings } from "./unknown-blocks.ts";

/**
 * Visits answer text that url_citation annotations index into (chat's content, a Responses output_text), which it
 * moves along with the text's edits; a walker without one visits that text as any other.
 */
export type Cited = (text: string, annotations: unknown) => string;

type Walker = (body: any, visit: Visit, cited?: Cited) => void;

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/**
 * Chat completion: choices[].message content, refusal, an audio answer's transcript, tool-call arguments (a custom
 * tool's free-form input as text), and the deprecated single function_call's arguments.
 */
const chat: Walker = (body, visit, cited) => {
  if (!Array.isArray(body?.choices)) return;
  for (const c of body.choices) {
    const m = c?.message;
    if (!isObj(m)) continue;
    if (typeof m.content === "string") m.content = cited ? cited(m.content, m.annotations) : visit(m.content);
    if (typeof m.refusal === "string") m.refusal = visit(m.refusal);
    // An audio answer's text is its transcript (the audio itself is not read).
    if (isObj(m.audio)) visitKey(m.audio, "transcript", visit);
    if (Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls) {
        if (isObj(tc?.function) && typeof tc.function.arguments === "string") tc.function.arguments = visitJsonString(tc.function.arguments, visit);
        else if (isObj(tc?.custom) && typeof tc.custom.input === "string") tc.custom.input = visit(tc.custom.input);
      }
    }
    if (isObj(m.function_call) && typeof m.function_call.arguments === "string") m.function_call.arguments = visitJsonString(m.function_call.arguments, visit);
  }
};

/** Blocks whose `input` the model wrote: its own tool calls, server tools' (a web search query, code) and MCP calls. */
export const MESSAGES_CALLS = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/** Blocks holding what a server tool answered: a fetched page, code and bash runs, a viewed file. */
export const MESSAGES_SERVER_RESULTS = new Set(["web_fetch_tool_result", "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result"]);

/** `o[k]` visited and written back when it is a string. */
function visitKey(o: Record<string, any>, k: string, visit: Visit): void {
  const v = o[k];
  if (typeof v !== "string") return;
  const n = visit(v);
  if (n !== v) o[k] = n;
}

/** Each string of `o[k]` when it is a list, visited and written back. */
function visitList(o: Record<string, any>, k: string, visit: Visit): void {
  const list = o[k];
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) if (typeof list[i] === "string") list[i] = visit(list[i]);
}

/**
 * A server tool result's text: a fetched page's title and text, stdout and stderr, a viewed file's content, the lines
 * a text editor's str_replace shows around its edit.
 */
export function serverToolResult(b: Record<string, any>, visit: Visit): void {
  const c = b.content;
  if (!isObj(c)) return;
  visitKey(c, "stdout", visit);
  visitKey(c, "stderr", visit);
  visitKey(c, "content", visit);
  if (c.type === "text_editor_code_execution_str_replace_result") visitList(c, "lines", visit);
  const doc = c.content;
  if (c.type === "web_fetch_result" && isObj(doc)) {
    visitKey(doc, "title", visit);
    if (isObj(doc.source) && doc.source.type === "text") visitKey(doc.source, "data", visit);
  }
}

/**
 * What a server tool or an MCP server answered, in an answer (a whole block: they are never streamed in deltas), and a
 * block of a type the gateway does not know, read whole (in a stream, the one its content_block_start carries).
 */
export function messagesResultBlock(b: Record<string, any>, visit: Visit): void {
  if (!KNOWN_MESSAGES_BLOCKS.has(b.type)) unknownBlockStrings(b, visit);
  else if (MESSAGES_SERVER_RESULTS.has(b.type)) serverToolResult(b, visit);
  else if (b.type === "mcp_tool_result") {
    if (typeof b.content === "string") b.content = visit(b.content);
    else if (Array.isArray(b.content)) {
      for (const p of b.content) {
        if (!isObj(p)) continue;
        if (p.type === "text") visitKey(p, "text", visit);
        else if (!KNOWN_NESTED_BLOCKS.has(p.type)) unknownBlockStrings(p, visit);
      }
    }
  }
}

/**
 * Messages: text blocks, the inputs of the calls the model makes, what server tools and MCP servers answered, and
 * blocks of types the gateway does not know, whole.
 */
const messages: Walker = (body, visit) => {
  if (!Array.isArray(body?.content)) return;
  for (const b of body.content) {
    if (!isObj(b)) continue;
    if (b.type === "text" && typeof b.text === "string") b.text = visit(b.text);
    else if (MESSAGES_CALLS.has(b.type) && isObj(b.input)) visitJsonValue(b.input, visit);
    else messagesResultBlock(b, visit);
  }
};

/**
 * One Responses output item: a message's output_text and refusal parts, a function call's arguments, a custom tool
 * call's input, an MCP call's arguments and output, the code interpreter's code and logs, shell commands, a patch's
 * diff, a web search's queries.
 */
export function responsesItem(it: any, visit: Visit, cited?: Cited): void {
  if (!isObj(it)) return;
  if (it.type === "message" && Array.isArray(it.content)) {
    for (const p of it.content) responsesPart(p, visit, cited);
  } else if ((it.type === "function_call" || it.type === "mcp_call" || it.type === "mcp_approval_request") && typeof it.arguments === "string") {
    it.arguments = visitJsonString(it.arguments, visit);
    if (it.type === "mcp_call") visitKey(it, "output", visit);
  } else if (it.type === "custom_tool_call" && typeof it.input === "string") it.input = visit(it.input);
  else if (it.type === "code_interpreter_call") {
    visitKey(it, "code", visit);
    if (Array.isArray(it.outputs)) for (const o of it.outputs) if (isObj(o) && o.type === "logs") visitKey(o, "logs", visit);
  } else hostedCall(it, visit);
}

/**
 * What the model wrote for a hosted or client-run tool to act on: shell commands, a patch's diff, a web search's
 * queries and find-in-page pattern. The client runs the commands and applies the patch, so a placeholder is restored.
 */
function hostedCall(it: Record<string, any>, visit: Visit): void {
  const a = it.action;
  if (it.type === "shell_call" && isObj(a)) visitList(a, "commands", visit);
  else if (it.type === "local_shell_call" && isObj(a)) visitList(a, "command", visit);
  else if (it.type === "apply_patch_call" && isObj(it.operation)) visitKey(it.operation, "diff", visit);
  else if (it.type === "web_search_call" && isObj(a)) {
    visitKey(a, "query", visit);
    visitList(a, "queries", visit);
    visitKey(a, "pattern", visit);
  }
}

export function responsesPart(p: any, visit: Visit, cited?: Cited): void {
  if (!isObj(p)) return;
  if (p.type === "output_text" && typeof p.text === "string") p.text = cited ? cited(p.text, p.annotations) : visit(p.text);
  else if (p.type === "refusal" && typeof p.refusal === "string") p.refusal = visit(p.refusal);
}

/** Responses: output[] items. */
const responses: Walker = (body, visit, cited) => {
  if (Array.isArray(body?.output)) for (const it of body.output) responsesItem(it, visit, cited);
};

/**
 * The request's own text a Responses answer echoes: `instructions` (a string, or input items). It left with this
 * request's placeholders; the client sent the values, so they are restored (not checked: it is the client's text).
 * Whether anything changed.
 */
export function responsesEchoed(response: any, restore: (text: string) => string): boolean {
  if (!isObj(response)) return false;
  const ins = response.instructions;
  if (typeof ins === "string") {
    const out = restore(ins);
    if (out === ins) return false;
    response.instructions = out;
    return true;
  }
  if (!Array.isArray(ins)) return false;
  let changed = false;
  const text = (s: string) => {
    const out = restore(s);
    if (out !== s) changed = true;
    return out;
  };
  for (const it of ins) {
    if (!isObj(it)) continue;
    if (typeof it.content === "string") it.content = text(it.content);
    else if (Array.isArray(it.content)) for (const p of it.content) if (isObj(p) && typeof p.text === "string") p.text = text(p.text);
  }
  return changed;
}

/** A Gemini part's code execution: the code the model wrote (executableCode), what running it printed. Whether it has one. */
export function geminiCodePart(p: Record<string, any>, visit: Visit): boolean {
  const code = p.executableCode, result = p.codeExecutionResult;
  if (isObj(code)) visitKey(code, "code", visit);
  if (isObj(result)) visitKey(result, "output", visit);
  return isObj(code) || isObj(result);
}

/** Gemini: candidates[].content.parts text (not thoughts), function-call args, code and its output. */
export function geminiCandidateParts(parts: unknown, visit: Visit): void {
  if (!Array.isArray(parts)) return;
  for (const p of parts) {
    if (!isObj(p) || p.thought === true) continue;
    if (typeof p.text === "string") p.text = visit(p.text);
    if (isObj(p.functionCall?.args)) visitJsonValue(p.functionCall.args, visit);
    geminiCodePart(p, visit);
  }
}

const gemini: Walker = (body, visit) => {
  if (!Array.isArray(body?.candidates)) return;
  for (const c of body.candidates) geminiCandidateParts(c?.content?.parts, visit);
};

const WALKERS: Record<ClientProtocol, Walker> = { openai: chat, anthropic: messages, responses, gemini };

/**
 * Hand every piece of a JSON answer's text to `visit`; replaced where it returns something else. Text that
 * annotations index into goes to `cited` instead, when given.
 */
export function walkAnswer(protocol: ClientProtocol, body: unknown, visit: Visit, cited?: Cited): void {
  WALKERS[protocol](body, visit, cited);
}
