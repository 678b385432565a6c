// The simulator answers in OpenAI's wire shape, as an OpenAI-protocol model: it takes every chat tool shape OpenAI
// takes and calls a custom tool (free-form input) as OpenAI does — `{type: "custom", custom: {name, input}}` — where a
// translated provider must drop or refuse it (chat-tool-forms.ts). A sandbox target says nothing of the model's live
// provider, so a sandbox Claude or Gemini model answers custom tools this way too.
// The planner (plan.ts) reads plain function tools: legacy functions and allowed_tools are made plain as for a
// translated provider, and custom tools are shown to it as function tools taking one string, `input`.
import { plainChatTools } from "../translate/chat-tool-forms.ts";
import type { Plan, PlannedToolCall } from "./plan.ts";

const INPUT = { type: "object", properties: { input: { type: "string" } }, required: ["input"] };

export interface SimTools {
  /** The body the planner reads. */
  plain: any;
  /** Names of the custom tools: their planned calls go out as custom calls (`customCall`). */
  custom: Set<string>;
}

const isCustom = (x: any) => x?.type === "custom" && typeof x.custom?.name === "string";
const asFunction = (x: any) => ({ type: "function", function: { name: x.custom.name } });

/** The request in the form the planner reads, and which of its tools are custom. */
export function simToolForms(body: any): SimTools {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const custom = new Set<string>(tools.filter(isCustom).map((t) => t.custom.name));
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const customCalls = messages.some((m) => m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.some(isCustom));
  if (!custom.size && !customCalls) return { plain: plainChatTools(body, []), custom };

  const tc = body.tool_choice;
  const out = {
    ...body,
    tools: tools.map((t) => (isCustom(t) ? { type: "function", function: { name: t.custom.name, description: t.custom.description, parameters: INPUT } } : t)),
    tool_choice: isCustom(tc) ? asFunction(tc)
      : tc?.type === "allowed_tools" && Array.isArray(tc.allowed_tools?.tools)
        ? { ...tc, allowed_tools: { ...tc.allowed_tools, tools: tc.allowed_tools.tools.map((t: any) => (isCustom(t) ? asFunction(t) : t)) } }
        : tc,
    // An earlier custom call stays in the conversation (OpenAI keeps it), so its result is what the model answers.
    messages: messages.map((m) => (m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.some(isCustom)
      ? { ...m, tool_calls: m.tool_calls.map((c: any) => (isCustom(c) ? { id: c.id, type: "function", function: { name: c.custom.name, arguments: JSON.stringify({ input: String(c.custom.input ?? "") }) } } : c)) }
      : m)),
  };
  if (out.tool_choice === undefined) delete out.tool_choice;
  if (!tools.length) delete out.tools;
  return { plain: plainChatTools(out, []), custom };
}

/** A planned call; `custom`: a custom tool's, its free-form input in `arguments`. */
export interface SimCall extends PlannedToolCall { custom?: boolean }

/** The plan with its custom tools' calls marked and carrying their input text (what is sent, and counted). */
export function withCustomCalls(plan: Plan, custom: Set<string>): Plan & { toolCalls: SimCall[] } {
  if (!custom.size || !plan.toolCalls.some((tc) => custom.has(tc.name))) return plan;
  return { ...plan, toolCalls: plan.toolCalls.map((tc) => (custom.has(tc.name) ? { ...tc, arguments: inputOf(tc.arguments), custom: true } : tc)) };
}

function inputOf(args: string): string {
  try {
    return String(JSON.parse(args)?.input ?? "");
  } catch {
    return args; // the planner always writes JSON
  }
}
