// The chat tool shapes only an OpenAI-protocol upstream takes as sent (they pass through to one, DESIGN §10), put in
// the one form the chat -> Anthropic / Gemini / Converse translators read: function tools, tool_choice auto / required
// / none / {type: function}, assistant tool_calls and tool messages.
// - Legacy function calling (protocols.md §1.2): `functions` are function tools, `function_call` the tool_choice, an
//   assistant's `function_call` a tool call and a `role: "function"` message its result. Legacy calls carry no id: each
//   gets `call_fn<i>` (i: its message's index), and a function message answers the latest unanswered call of its name.
// - tool_choice `allowed_tools`: only the allowed function tools are sent, tool_choice = its mode (as for Responses,
//   docs/responses.md); required with no function among them cannot be honoured: 400.
// - `custom` tools (free-form input) have no counterpart: dropped, named `tools[i].type=custom` (as Responses' other
//   tool types are); a tool_choice forcing one is a 400. A custom tool's call an earlier turn made goes the same way,
//   with its result: dropped, named `messages[i].tool_calls[k].type=custom` and `messages[j]` (the tool message).
import { invalidRequest } from "../../core/errors.ts";

/** `body` when it has none of these shapes (the common case), else a copy in the plain form; `dropped` is added to. */
export function plainChatTools(body: any, dropped: string[]): any {
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const legacyMessages = messages.some((m) => m?.role === "function" || (m?.role === "assistant" && m.function_call));
  const customCalls = messages.some((m) => m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.some((tc: any) => tc?.type !== "function"));
  const tools: any[] | undefined = Array.isArray(body.tools) ? body.tools : undefined;
  const custom = tools?.some((t) => t?.type !== "function") === true;
  const tc = body.tool_choice;
  const choiceForm = tc !== null && typeof tc === "object" && tc.type !== "function";
  const legacy = (body.functions !== undefined && body.functions !== null) || (body.function_call !== undefined && body.function_call !== null);
  if (!legacy && !legacyMessages && !customCalls && !custom && !choiceForm) return body;

  const out = { ...body };
  delete out.functions;
  delete out.function_call;
  let fnTools: any[] = [];
  tools?.forEach((t, i) => {
    if (t?.type === "function") fnTools.push(t);
    else dropped.push(`tools[${i}].type=${String(t?.type)}`);
  });
  if (Array.isArray(body.functions)) fnTools.push(...body.functions.map((f: any) => ({ type: "function", function: f })));
  let choice = tc ?? legacyChoice(body.function_call);
  if (choice !== null && typeof choice === "object" && choice.type === "allowed_tools") {
    const allowed = new Set((choice.allowed_tools?.tools ?? []).filter((t: any) => t?.type === "function").map((t: any) => t.function?.name));
    fnTools = fnTools.filter((t) => allowed.has(t.function?.name));
    const required = choice.allowed_tools?.mode === "required";
    if (required && !fnTools.length) throw invalidRequest("tool_choice allowed_tools in mode required keeps no function tool this model's provider can call", "tool_choice.allowed_tools.tools");
    choice = required ? "required" : "auto";
  } else if (choice !== null && typeof choice === "object" && choice.type !== "function") {
    throw invalidRequest(`tool_choice type "${String(choice.type)}" is not supported by this model's provider`, "tool_choice.type");
  }
  // required with only custom tools would answer text where the client demands a call (as allowed_tools above).
  if (choice === "required" && !fnTools.length && custom) throw invalidRequest("tool_choice required with only custom tools, which this model's provider cannot call", "tool_choice");
  if (fnTools.length) out.tools = fnTools;
  else delete out.tools;
  if (choice === undefined || choice === null || (!fnTools.length && typeof choice === "object")) delete out.tool_choice;
  else out.tool_choice = choice;
  if (legacyMessages) out.messages = plainMessages(messages);
  if (customCalls) out.messages = withoutCustomCalls(out.messages, dropped);
  return out;
}

/** The history without custom tool calls and their results (named in `dropped`); a turn left empty goes too. */
function withoutCustomCalls(messages: any[], dropped: string[]): any[] {
  const gone = new Set<string>();
  const out: any[] = [];
  messages.forEach((m, i) => {
    if (m?.role === "assistant" && Array.isArray(m.tool_calls)) {
      const kept = m.tool_calls.filter((tc: any, k: number) => {
        if (tc?.type === "function") return true;
        dropped.push(`messages[${i}].tool_calls[${k}].type=${String(tc?.type)}`);
        gone.add(tc?.id);
        return false;
      });
      const { tool_calls: _calls, ...rest } = m;
      if (kept.length === m.tool_calls.length) out.push(m);
      else if (kept.length) out.push({ ...rest, tool_calls: kept });
      else if (hasContent(m)) out.push(rest);
      return;
    }
    if (m?.role === "tool" && gone.has(m.tool_call_id)) {
      dropped.push(`messages[${i}]`);
      return;
    }
    out.push(m);
  });
  return out;
}

function hasContent(m: any): boolean {
  if (typeof m.content === "string") return m.content.length > 0;
  return (Array.isArray(m.content) && m.content.length > 0) || (typeof m.refusal === "string" && m.refusal.length > 0) || !!m.function_call;
}

function legacyChoice(fc: any): unknown {
  if (fc === "auto" || fc === "none") return fc;
  if (fc && typeof fc === "object" && typeof fc.name === "string") return { type: "function", function: { name: fc.name } };
  return undefined;
}

/** Legacy calls and results as tool_calls and tool messages, paired by name (latest unanswered call first). */
function plainMessages(messages: any[]): any[] {
  const open = new Map<string, string[]>(); // function name -> ids of its calls not answered yet
  return messages.map((m, i) => {
    if (m?.role === "assistant" && m.function_call) {
      const id = `call_fn${i}`;
      const { function_call: fc, ...rest } = m;
      const list = open.get(fc.name) ?? [];
      list.push(id);
      open.set(fc.name, list);
      const call = { id, type: "function", function: { name: fc.name, arguments: typeof fc.arguments === "string" ? fc.arguments : JSON.stringify(fc.arguments ?? {}) } };
      return { ...rest, tool_calls: [...(Array.isArray(m.tool_calls) ? m.tool_calls : []), call] };
    }
    if (m?.role === "function") {
      const id = open.get(m.name)?.pop();
      if (!id) throw invalidRequest("a function message answers no earlier function_call of that name", `messages[${i}].name`);
      return { role: "tool", tool_call_id: id, content: typeof m.content === "string" ? m.content : "" };
    }
    return m;
  });
}
