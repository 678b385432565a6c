// The answer to a legacy function-calling request (`functions`, no `tools`) in the legacy shape: OpenAI answers one
// with message.function_call / delta.function_call and finish_reason "function_call" (protocols.md §1.6), and the
// clients that still send `functions` read only those. A translated upstream's answer (or the simulator's) comes
// back as tool_calls: this turns it back. The call's id is left out, as legacy calls carry none: the next turn's
// assistant function_call gets its `call_fn<i>` id again (chat-tool-forms.ts), so it still pairs with its result.
// Legacy function calling has one call per turn: a second call the model made is left out.
import type { SseEvent } from "../../core/sse/parse.ts";

/** The request used legacy function calling: its answer must come back in that shape. */
export function wantsFunctionCall(body: any): boolean {
  const tools = body?.tools;
  return Array.isArray(body?.functions) && body.functions.length > 0 && !(Array.isArray(tools) && tools.length > 0);
}

/** A chat.completion's choices with their first tool call as function_call (in place; returns `json`). */
export function functionCallAnswer<T>(json: T): T {
  const choices = (json as any)?.choices;
  if (!Array.isArray(choices)) return json;
  for (const c of choices) {
    const m = c?.message;
    if (m && Array.isArray(m.tool_calls)) {
      const first = m.tool_calls[0];
      delete m.tool_calls;
      if (first?.function) m.function_call = { name: first.function.name, arguments: first.function.arguments ?? "" };
    }
    if (c?.finish_reason === "tool_calls") c.finish_reason = "function_call";
  }
  return json;
}

/** A chat stream with each choice's first tool call as delta.function_call fragments. */
export async function* functionCallStream(events: AsyncIterable<SseEvent>): AsyncGenerator<SseEvent> {
  for await (const ev of events) {
    const out = functionCallChunk(ev);
    if (out) yield out;
  }
}

/** One chunk in the legacy shape; undefined when all it carried was a later call, which legacy cannot say. */
function functionCallChunk(ev: SseEvent): SseEvent | undefined {
  if (ev.comment !== undefined || ev.event !== undefined || !ev.data.includes('"tool_calls"')) return ev;
  let chunk: any;
  try {
    chunk = JSON.parse(ev.data);
  } catch {
    return ev;
  }
  if (!Array.isArray(chunk?.choices)) return ev;
  let meaningful = chunk.choices.length === 0 || chunk.usage != null;
  for (const c of chunk.choices) {
    const d = c?.delta;
    if (d && Array.isArray(d.tool_calls)) {
      const first = d.tool_calls.find((tc: any) => (tc?.index ?? 0) === 0);
      delete d.tool_calls;
      if (first?.function) {
        d.function_call = first.function.name !== undefined ? { name: first.function.name, arguments: first.function.arguments ?? "" } : { arguments: first.function.arguments ?? "" };
      }
    }
    if (c?.finish_reason === "tool_calls") c.finish_reason = "function_call";
    if (c?.finish_reason != null || (d && Object.keys(d).length > 0)) meaningful = true;
  }
  return meaningful ? { ...ev, data: JSON.stringify(chunk) } : undefined;
}
