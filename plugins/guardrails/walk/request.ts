// Where a request's text is, per client protocol: every string a model will read (system prompts, messages, their text
// parts, refusals, documents and search results, tool results, tool-call arguments and inputs the client sends back,
// predicted outputs, prompt-template variables) is handed to `visit`, and replaced in the body when visit returns
// something else. `topic` marks the latest user turn's own text, which allow rules and moderation judge: the last user
// message that has text of its own (one holding only an image or a tool result hands the judging to the one before,
// whose text a client could otherwise slip past them behind a made-up tool call). A text document in a user turn is
// that turn's text. A history the client wrote with no user text at all (only a system prompt, a made-up tool result)
// has every text of it judged instead: the ask is somewhere in what the client wrote, and judging nothing would let
// any request past. Only a request continuing stored state (a Responses previous_response_id, conversation, stored
// prompt or item_reference; a Gemini cachedContent: stored-state.ts) may have no user text and go unjudged: its user
// turn lives in that state and was judged when it was sent.
// Signed or encrypted content (thinking blocks, reasoning items, Gemini thought parts of model turns) is left as it
// is: changing it would break its signature. A Messages block of a type the gateway does not know (the SDK's betas:
// compaction, tool_reference...) reaches Claude as sent, so every string in it is text the model may read.
import type { ClientProtocol } from "../../../core/pipeline/context.ts";
import { visitJsonString, visitJsonValue } from "./json-text.ts";
import { MESSAGES_CALLS, MESSAGES_SERVER_RESULTS, geminiCodePart, serverToolResult } from "./answer.ts";
import { geminiContinuesStored, responsesContinuesStored } from "./stored-state.ts";
import { KNOWN_MESSAGES_BLOCKS, KNOWN_NESTED_BLOCKS, unknownBlockStrings } from "./unknown-blocks.ts";

/** `doc`: the text is a Messages text document's `source.data`, at this document_index (citations point into it). */
export type RequestVisit = (text: string, topic: boolean, doc?: number) => string;
type Walker = (body: any, visit: RequestVisit) => void;

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";
/** Text a reader would see (not "" or only spaces). */
const hasText = (v: unknown): v is string => typeof v === "string" && /\S/.test(v);

/** The index of the last element that is a user turn with text of its own (-1 when none). */
function topicIndex(items: unknown[], isUserText: (x: any) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (isObj(items[i]) && isUserText(items[i])) return i;
  return -1;
}

/** `o[k]` visited and written back when it is a string. */
function visitField(o: Record<string, any>, k: string, visit: RequestVisit, topic: boolean, doc?: number): void {
  const v = o[k];
  if (typeof v !== "string") return;
  const n = doc === undefined ? visit(v, topic) : visit(v, topic, doc);
  if (n !== v) o[k] = n;
}

/** Text parts of a content array ({type: "text" | "input_text" | "output_text", text}) and refusal parts. */
function visitParts(parts: unknown[], visit: RequestVisit, topic: boolean, types: readonly string[], refusals = false): void {
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (types.includes(p.type)) visitField(p, "text", visit, topic);
    else if (p.type === "refusal") visitField(p, "refusal", visit, refusals);
  }
}

const partsHaveText = (parts: unknown, types: readonly string[]) =>
  Array.isArray(parts) && parts.some((p) => isObj(p) && types.includes(p.type) && hasText(p.text));

const CHAT_PARTS = ["text"];
const args = (visit: RequestVisit, judged = false) => (s: string) => visit(s, judged);

/** Chat completions: messages[].content (string or text and refusal parts), refusals, tool-call arguments and custom inputs, prediction. */
const chat: Walker = (body, visit) => {
  const msgs = body?.messages;
  let all = true;
  if (Array.isArray(msgs)) {
    const last = topicIndex(msgs, (m) => m.role === "user" && (hasText(m.content) || partsHaveText(m.content, CHAT_PARTS)));
    // No user text anywhere: the system prompt, tool results and the rest carry the ask, so all of it is judged.
    all = last < 0;
    msgs.forEach((m, i) => {
      if (!isObj(m)) return;
      const topic = i === last || all;
      if (typeof m.content === "string") m.content = visit(m.content, topic);
      else if (Array.isArray(m.content)) visitParts(m.content, visit, topic, CHAT_PARTS, all);
      visitField(m, "refusal", visit, all);
      if (Array.isArray(m.tool_calls)) {
        for (const tc of m.tool_calls) {
          if (isObj(tc?.function) && typeof tc.function.arguments === "string") tc.function.arguments = visitJsonString(tc.function.arguments, args(visit, all));
          // A custom tool's call: its free-form input is plain text.
          else if (isObj(tc?.custom) && typeof tc.custom.input === "string") tc.custom.input = visit(tc.custom.input, all);
        }
      }
      // The deprecated single function call an assistant message may still carry.
      if (isObj(m.function_call) && typeof m.function_call.arguments === "string") m.function_call.arguments = visitJsonString(m.function_call.arguments, args(visit, all));
    });
  }
  // Predicted output: the model reads it to speed up its answer, so it leaves too.
  const p = body?.prediction;
  if (isObj(p)) {
    if (typeof p.content === "string") p.content = visit(p.content, all);
    else if (Array.isArray(p.content)) visitParts(p.content, visit, all, CHAT_PARTS);
  }
};

/** Whether an unknown block holds any text a reader would see. */
function unknownBlockHasText(b: Record<string, any>): boolean {
  let found = false;
  unknownBlockStrings(b, (s) => ((found ||= hasText(s)), s));
  return found;
}

/** A Messages document's text: plain-text source data, content-source text blocks (and unknown ones), its title and context. */
function messagesDocument(b: Record<string, any>, visit: RequestVisit, topic: boolean, index: number): void {
  visitField(b, "title", visit, topic);
  visitField(b, "context", visit, topic);
  const s = b.source;
  if (!isObj(s)) return;
  if (s.type === "text") visitField(s, "data", visit, topic, index);
  else if (s.type === "content") {
    if (typeof s.content === "string") s.content = visit(s.content, topic);
    else if (Array.isArray(s.content)) {
      for (const p of s.content) {
        if (!isObj(p)) continue;
        if (p.type === "text") visitField(p, "text", visit, topic);
        else if (!KNOWN_NESTED_BLOCKS.has(p.type)) unknownBlockStrings(p, args(visit, topic));
      }
    }
  }
}

/** Text a document, search result or unknown block in a user turn gives it (the turn's own text, as its text blocks are). */
function blockHasText(b: unknown): boolean {
  if (!isObj(b)) return false;
  if (!KNOWN_MESSAGES_BLOCKS.has(b.type)) return unknownBlockHasText(b);
  if (b.type === "text") return hasText(b.text);
  if (b.type === "search_result") return partsHaveText(b.content, CHAT_PARTS);
  if (b.type !== "document" || !isObj(b.source)) return false;
  const s = b.source;
  if (s.type === "text") return hasText(s.data);
  if (s.type !== "content") return false;
  const unknownHasText = (p: unknown) => isObj(p) && !KNOWN_NESTED_BLOCKS.has(p.type) && unknownBlockHasText(p);
  return hasText(s.content) || partsHaveText(s.content, CHAT_PARTS) || (Array.isArray(s.content) && s.content.some(unknownHasText));
}

/** Messages walk state: document_index counts every document block of the request in order, PDFs included. */
interface MessagesWalk {
  visit: RequestVisit;
  docs: number;
  /** No user text anywhere: every text is judged (tool results and tool_use inputs included). */
  all: boolean;
}

/**
 * One Messages content block (top level, or `nested` inside a tool_result). `topic`: the turn's text, documents,
 * results. A block whose type the schema does not know there has all its strings judged as that turn's text.
 */
function messagesBlock(b: unknown, w: MessagesWalk, topic: boolean, nested = false): void {
  if (!isObj(b)) return;
  const visit = w.visit;
  if (!(nested ? KNOWN_NESTED_BLOCKS : KNOWN_MESSAGES_BLOCKS).has(b.type)) unknownBlockStrings(b, args(visit, topic));
  else if (b.type === "text") visitField(b, "text", visit, topic);
  else if (b.type === "tool_result" || b.type === "mcp_tool_result") {
    if (typeof b.content === "string") b.content = visit(b.content, w.all);
    else if (Array.isArray(b.content)) for (const c of b.content) messagesBlock(c, w, w.all, true);
  } else if (MESSAGES_CALLS.has(b.type) && isObj(b.input)) visitJsonValue(b.input, args(visit, w.all));
  else if (MESSAGES_SERVER_RESULTS.has(b.type)) serverToolResult(b, args(visit, w.all));
  else if (b.type === "document") messagesDocument(b, visit, topic, w.docs++);
  else if (b.type === "search_result") {
    visitField(b, "title", visit, topic);
    if (Array.isArray(b.content)) visitParts(b.content, visit, topic, CHAT_PARTS);
  }
}

/** Messages: system, text blocks, documents, search results, tool and server tool results, the inputs of the calls the model made. */
const messages: Walker = (body, visit) => {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  const last = topicIndex(msgs, (m) => m.role === "user" && (hasText(m.content) || (Array.isArray(m.content) && m.content.some(blockHasText))));
  const w: MessagesWalk = { visit, docs: 0, all: last < 0 };
  if (typeof body?.system === "string") body.system = visit(body.system, w.all);
  else if (Array.isArray(body?.system)) visitParts(body.system, visit, w.all, CHAT_PARTS);
  msgs.forEach((m: unknown, i: number) => {
    if (!isObj(m)) return;
    const topic = i === last || w.all;
    if (typeof m.content === "string") m.content = visit(m.content, topic);
    else if (Array.isArray(m.content)) for (const b of m.content) messagesBlock(b, w, topic);
  });
};

const RESPONSES_PARTS = ["input_text", "output_text", "text"];
const isMessageItem = (it: Record<string, any>) => it.role !== undefined && (it.type === undefined || it.type === "message");

/** A reusable prompt's variables: strings and input_text objects are substituted into what the model reads. */
function promptVariables(vars: unknown, visit: RequestVisit, judged: boolean): void {
  if (!isObj(vars)) return;
  for (const k of Object.keys(vars)) {
    const v = vars[k];
    if (typeof v === "string") visitField(vars, k, visit, judged);
    else if (isObj(v) && v.type === "input_text") visitField(v, "text", visit, judged);
  }
}

/** Responses: instructions, prompt variables, input (a string or items: messages, tool calls and their outputs). */
const responses: Walker = (body, visit) => {
  const items = Array.isArray(body?.input) ? body.input : [];
  const last = typeof body?.input === "string" ? 0 : topicIndex(items, (it) => it.role === "user" && isMessageItem(it) && (hasText(it.content) || partsHaveText(it.content, RESPONSES_PARTS)));
  // No user text: judge all of it, unless this continues stored state whose user turn was judged when it was sent.
  const all = last < 0 && !responsesContinuesStored(body);
  if (typeof body?.instructions === "string") body.instructions = visit(body.instructions, all);
  if (isObj(body?.prompt)) promptVariables(body.prompt.variables, visit, all);
  if (typeof body?.input === "string") {
    body.input = visit(body.input, true);
    return;
  }
  items.forEach((it: unknown, i: number) => {
    if (!isObj(it)) return;
    const topic = i === last || all;
    if (isMessageItem(it)) {
      if (typeof it.content === "string") it.content = visit(it.content, topic);
      else if (Array.isArray(it.content)) visitParts(it.content, visit, topic, RESPONSES_PARTS, all);
    } else if ((it.type === "function_call" || it.type === "custom_tool_call") && typeof (it.arguments ?? it.input) === "string") {
      if (typeof it.arguments === "string") it.arguments = visitJsonString(it.arguments, args(visit, all));
      else it.input = visit(it.input, all);
    } else if (it.type === "function_call_output" || it.type === "custom_tool_call_output") {
      if (typeof it.output === "string") it.output = visit(it.output, all);
      else if (Array.isArray(it.output)) visitParts(it.output, visit, all, RESPONSES_PARTS);
    } else responsesToolItem(it, visit, all);
  });
};

/** Each string of `list` (a command's words) visited and written back. */
function visitStrings(list: unknown, visit: RequestVisit, judged: boolean): void {
  if (!Array.isArray(list)) return;
  list.forEach((s, i) => {
    if (typeof s !== "string") return;
    const n = visit(s, judged);
    if (n !== s) list[i] = n;
  });
}

/**
 * Hosted and shell tool items a client sends back: what the model wrote (MCP arguments, commands, patches, code,
 * search queries) and what the tools answered (MCP output, shell output, logs). Names, paths, urls and ids stay.
 */
function responsesToolItem(it: Record<string, any>, visit: RequestVisit, all: boolean): void {
  const a = it.action;
  switch (it.type) {
    case "mcp_call":
    case "mcp_approval_request":
      if (typeof it.arguments === "string") it.arguments = visitJsonString(it.arguments, args(visit, all));
      visitField(it, "output", visit, all);
      break;
    case "local_shell_call":
      if (isObj(a)) visitStrings(a.command, visit, all);
      break;
    case "shell_call":
      if (isObj(a)) visitStrings(a.commands, visit, all);
      break;
    case "local_shell_call_output":
    case "apply_patch_call_output":
      visitField(it, "output", visit, all);
      break;
    case "shell_call_output":
      if (typeof it.output === "string") visitField(it, "output", visit, all);
      else if (Array.isArray(it.output)) {
        for (const o of it.output) {
          if (!isObj(o)) continue;
          visitField(o, "stdout", visit, all);
          visitField(o, "stderr", visit, all);
        }
      }
      break;
    case "apply_patch_call":
      if (isObj(it.operation)) visitField(it.operation, "diff", visit, all);
      break;
    case "code_interpreter_call":
      visitField(it, "code", visit, all);
      if (Array.isArray(it.outputs)) for (const o of it.outputs) if (isObj(o) && o.type === "logs") visitField(o, "logs", visit, all);
      break;
    case "web_search_call":
      if (isObj(a)) {
        visitField(a, "query", visit, all);
        visitStrings(a.queries, visit, all);
        visitField(a, "pattern", visit, all);
      }
  }
}

/**
 * Gemini parts: text (not a model turn's thoughts), function calls' args and function responses, code and its output. Field names are
 * camelCase: the Gemini endpoints rename a snake_case request first (core/endpoints/gemini/field-names.ts).
 */
function geminiParts(parts: unknown, visit: RequestVisit, topic: boolean, model: boolean, all: boolean): void {
  if (!Array.isArray(parts)) return;
  for (const p of parts) {
    if (!isObj(p) || (model && p.thought === true)) continue;
    visitField(p, "text", visit, topic);
    const call = p.functionCall;
    if (isObj(call?.args)) visitJsonValue(call.args, args(visit, all));
    const response = p.functionResponse;
    if (isObj(response?.response)) visitJsonValue(response.response, args(visit, all));
    geminiCodePart(p, args(visit, all));
  }
}

const geminiHasText = (c: Record<string, any>) => Array.isArray(c.parts) && c.parts.some((p: unknown) => isObj(p) && hasText(p.text));

/** Gemini: systemInstruction and contents (countTokens may nest them in generateContentRequest). */
const gemini: Walker = (body, visit) => {
  const nested = isObj(body) ? body.generateContentRequest : undefined;
  const b = isObj(nested) ? nested : body;
  if (!isObj(b)) return;
  const contents = b.contents;
  const list: unknown[] = Array.isArray(contents) ? contents : [];
  // A turn without a role is the user's (as the Gemini API reads it).
  const last = typeof contents === "string" ? 0 : topicIndex(list, (c) => (c.role ?? "user") === "user" && geminiHasText(c));
  // No user text: everything the client wrote is judged, unless a context cache holds the user turn (judged when sent).
  const all = last < 0 && !geminiContinuesStored(b, body);
  if (isObj(b.systemInstruction)) geminiParts(b.systemInstruction.parts, visit, all, false, all);
  else visitField(b, "systemInstruction", visit, all);
  if (typeof contents === "string") {
    b.contents = visit(contents, true);
    return;
  }
  list.forEach((c, i) => {
    if (isObj(c)) geminiParts(c.parts, visit, i === last || all, c.role === "model", all);
  });
};

const WALKERS: Record<ClientProtocol, Walker> = { openai: chat, anthropic: messages, responses, gemini };

/** Hand every piece of the request's text to `visit`, by the client's protocol; replaced where visit changes it. */
export function walkRequest(protocol: ClientProtocol, body: unknown, visit: RequestVisit): void {
  WALKERS[protocol](body, visit);
}
