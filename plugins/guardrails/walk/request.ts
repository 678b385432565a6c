// Where a request's text is, per client protocol: every string a model will read (system prompts, messages, their text
// parts, tool results, tool-call arguments and inputs the client sends back) is handed to `visit`, and replaced in the
// body when visit returns something else. `topic` marks the latest user turn's own text, which allow rules judge.
// Signed or encrypted content (thinking blocks, reasoning items, Gemini thought parts) is left as it is: changing it
// would break its signature.
import type { ClientProtocol } from "../../../core/pipeline/context.ts";
import { visitJsonString, visitJsonValue } from "./json-text.ts";

export type RequestVisit = (text: string, topic: boolean) => string;
type Walker = (body: any, visit: RequestVisit) => void;

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/** The index of the last element whose role is `role` (-1 when none). */
function lastIndexOf(items: unknown[], role: string, roleOf: (x: any) => unknown = (x) => x?.role): number {
  for (let i = items.length - 1; i >= 0; i--) if (roleOf(items[i]) === role) return i;
  return -1;
}

/** Text parts of a content array ({type: "text" | "input_text" | "output_text", text}). */
function visitParts(parts: unknown[], visit: RequestVisit, topic: boolean, types: readonly string[]): void {
  for (const p of parts) {
    if (isObj(p) && types.includes(p.type) && typeof p.text === "string") {
      const n = visit(p.text, topic);
      if (n !== p.text) p.text = n;
    }
  }
}

const CHAT_PARTS = ["text"];

/** Chat completions: messages[].content (string or text parts), assistant tool-call arguments. */
const chat: Walker = (body, visit) => {
  const msgs = body?.messages;
  if (!Array.isArray(msgs)) return;
  const last = lastIndexOf(msgs, "user");
  msgs.forEach((m, i) => {
    if (!isObj(m)) return;
    const topic = i === last;
    if (typeof m.content === "string") m.content = visit(m.content, topic);
    else if (Array.isArray(m.content)) visitParts(m.content, visit, topic, CHAT_PARTS);
    if (Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls) {
        if (isObj(tc?.function) && typeof tc.function.arguments === "string") tc.function.arguments = visitJsonString(tc.function.arguments, (s) => visit(s, false));
      }
    }
  });
};

/** Messages: system (string or text blocks), text blocks, tool_result contents, tool_use inputs. */
const messages: Walker = (body, visit) => {
  if (typeof body?.system === "string") body.system = visit(body.system, false);
  else if (Array.isArray(body?.system)) visitParts(body.system, visit, false, CHAT_PARTS);
  const msgs = body?.messages;
  if (!Array.isArray(msgs)) return;
  const last = lastIndexOf(msgs, "user");
  msgs.forEach((m, i) => {
    if (!isObj(m)) return;
    const topic = i === last;
    if (typeof m.content === "string") {
      m.content = visit(m.content, topic);
      return;
    }
    if (!Array.isArray(m.content)) return;
    for (const b of m.content) {
      if (!isObj(b)) continue;
      if (b.type === "text" && typeof b.text === "string") b.text = visit(b.text, topic);
      else if (b.type === "tool_result") {
        if (typeof b.content === "string") b.content = visit(b.content, false);
        else if (Array.isArray(b.content)) visitParts(b.content, visit, false, CHAT_PARTS);
      } else if (b.type === "tool_use" && isObj(b.input)) visitJsonValue(b.input, (s) => visit(s, false));
    }
  });
};

const RESPONSES_PARTS = ["input_text", "output_text", "text"];

/** Responses: instructions, input (a string or items: messages, function calls and their outputs). */
const responses: Walker = (body, visit) => {
  if (typeof body?.instructions === "string") body.instructions = visit(body.instructions, false);
  if (typeof body?.input === "string") {
    body.input = visit(body.input, true);
    return;
  }
  const items = body?.input;
  if (!Array.isArray(items)) return;
  const last = lastIndexOf(items, "user");
  items.forEach((it, i) => {
    if (!isObj(it)) return;
    const topic = i === last;
    if (it.role !== undefined && (it.type === undefined || it.type === "message")) {
      if (typeof it.content === "string") it.content = visit(it.content, topic);
      else if (Array.isArray(it.content)) visitParts(it.content, visit, topic, RESPONSES_PARTS);
    } else if ((it.type === "function_call" || it.type === "custom_tool_call") && typeof (it.arguments ?? it.input) === "string") {
      if (typeof it.arguments === "string") it.arguments = visitJsonString(it.arguments, (s) => visit(s, false));
      else it.input = visit(it.input, false);
    } else if (it.type === "function_call_output" || it.type === "custom_tool_call_output") {
      if (typeof it.output === "string") it.output = visit(it.output, false);
      else if (Array.isArray(it.output)) visitParts(it.output, visit, false, RESPONSES_PARTS);
    }
  });
};

/** Gemini text parts (not thoughts), function calls' args and function responses. */
function geminiParts(parts: unknown, visit: RequestVisit, topic: boolean): void {
  if (!Array.isArray(parts)) return;
  for (const p of parts) {
    if (!isObj(p) || p.thought === true) continue;
    if (typeof p.text === "string") p.text = visit(p.text, topic);
    if (isObj(p.functionCall?.args)) visitJsonValue(p.functionCall.args, (s) => visit(s, false));
    if (isObj(p.functionResponse?.response)) visitJsonValue(p.functionResponse.response, (s) => visit(s, false));
  }
}

/** Gemini: systemInstruction and contents (countTokens may nest them in generateContentRequest). */
const gemini: Walker = (body, visit) => {
  const b = isObj(body?.generateContentRequest) ? body.generateContentRequest : body;
  if (isObj(b?.systemInstruction)) geminiParts(b.systemInstruction.parts, visit, false);
  else if (typeof b?.systemInstruction === "string") b.systemInstruction = visit(b.systemInstruction, false);
  const contents = b?.contents;
  if (typeof contents === "string") {
    b.contents = visit(contents, true);
    return;
  }
  if (!Array.isArray(contents)) return;
  // A turn without a role is the user's (as the Gemini API reads it).
  const last = lastIndexOf(contents, "user", (c) => (isObj(c) ? c.role ?? "user" : undefined));
  contents.forEach((c, i) => {
    if (isObj(c)) geminiParts(c.parts, visit, i === last);
  });
};

const WALKERS: Record<ClientProtocol, Walker> = { openai: chat, anthropic: messages, responses, gemini };

/** Hand every piece of the request's text to `visit`, by the client's protocol; replaced where visit changes it. */
export function walkRequest(protocol: ClientProtocol, body: unknown, visit: RequestVisit): void {
  WALKERS[protocol](body, visit);
}
