// A stored response as the Responses stream that makes it (GET /responses/{id}?stream=true, what the openai SDK's
// retrieve(id, {stream: true}) and responses.stream({response_id}) read): response.created and in_progress, then per
// output item output_item.added, its content as one delta per part (output_text with its annotations and logprobs, a
// refusal, a function call's arguments, a custom tool's input, a reasoning item's summary and text), output_item.done
// with the item as stored, and the terminal event of its status carrying the whole response. Numbered from 0, the
// same for every replay of the same response (so starting_after means the same each time); not the numbering of the
// stream that created it, whose deltas were cut where its upstream cut them.
import type { SseEvent } from "../sse/parse.ts";

type Json = Record<string, any>;

const TERMINAL: Record<string, string> = { completed: "response.completed", incomplete: "response.incomplete", failed: "response.failed" };

class Numbered {
  readonly events: SseEvent[] = [];
  emit(type: string, payload: Json): void {
    this.events.push({ event: type, data: JSON.stringify({ type, sequence_number: this.events.length, ...payload }) });
  }
}

/** An item as output_item.added shows it: begun, its content still to come. */
function opened(item: Json): Json {
  switch (item.type) {
    case "message":
      return { ...item, status: "in_progress", content: [] };
    case "function_call":
      return { ...item, arguments: "", status: "in_progress" };
    case "custom_tool_call":
      return { ...item, input: "" };
    case "reasoning":
      return { ...item, summary: [], ...(Array.isArray(item.content) ? { content: [] } : {}) };
    default:
      return "status" in item ? { ...item, status: "in_progress" } : item;
  }
}

/** A message's content part: added empty, its text in one delta, done whole. */
function messagePart(out: Numbered, at: Json, part: Json): void {
  if (part.type === "output_text") {
    out.emit("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    const logprobs = Array.isArray(part.logprobs) ? part.logprobs : [];
    if (part.text) out.emit("response.output_text.delta", { ...at, delta: part.text, logprobs });
    (Array.isArray(part.annotations) ? part.annotations : []).forEach((annotation: unknown, annotation_index: number) =>
      out.emit("response.output_text.annotation.added", { ...at, annotation_index, annotation }));
    out.emit("response.output_text.done", { ...at, text: part.text ?? "", logprobs });
  } else if (part.type === "refusal") {
    out.emit("response.content_part.added", { ...at, part: { type: "refusal", refusal: "" } });
    if (part.refusal) out.emit("response.refusal.delta", { ...at, delta: part.refusal });
    out.emit("response.refusal.done", { ...at, refusal: part.refusal ?? "" });
  } else {
    out.emit("response.content_part.added", { ...at, part });
  }
  out.emit("response.content_part.done", { ...at, part });
}

/** What comes between an item's added and done events. */
function itemBody(out: Numbered, item: Json, output_index: number): void {
  const item_id = item.id;
  switch (item.type) {
    case "message":
      (Array.isArray(item.content) ? item.content : []).forEach((part: Json, content_index: number) => messagePart(out, { item_id, output_index, content_index }, part));
      return;
    case "function_call":
      if (item.arguments) out.emit("response.function_call_arguments.delta", { item_id, output_index, delta: item.arguments });
      out.emit("response.function_call_arguments.done", { item_id, output_index, name: item.name, arguments: item.arguments ?? "" });
      return;
    case "custom_tool_call":
      if (item.input) out.emit("response.custom_tool_call_input.delta", { item_id, output_index, delta: item.input });
      out.emit("response.custom_tool_call_input.done", { item_id, output_index, input: item.input ?? "" });
      return;
    case "reasoning":
      (Array.isArray(item.summary) ? item.summary : []).forEach((part: Json, summary_index: number) => {
        const at = { item_id, output_index, summary_index };
        out.emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
        if (part.text) out.emit("response.reasoning_summary_text.delta", { ...at, delta: part.text });
        out.emit("response.reasoning_summary_text.done", { ...at, text: part.text ?? "" });
        out.emit("response.reasoning_summary_part.done", { ...at, part });
      });
      (Array.isArray(item.content) ? item.content : []).forEach((part: Json, content_index: number) => {
        const at = { item_id, output_index, content_index };
        out.emit("response.content_part.added", { ...at, part: { type: part.type, text: "" } });
        if (part.text) out.emit("response.reasoning_text.delta", { ...at, delta: part.text });
        out.emit("response.reasoning_text.done", { ...at, text: part.text ?? "" });
        out.emit("response.content_part.done", { ...at, part });
      });
      return;
  }
}

/** The events of `response` (a stored response as GET answers it), numbered from 0. */
export function replayEvents(response: Json): SseEvent[] {
  const out = new Numbered();
  const output: Json[] = Array.isArray(response.output) ? response.output : [];
  const begun = { ...response, status: "in_progress", output: [], usage: null, error: null, incomplete_details: null };
  out.emit("response.created", { response: begun });
  out.emit("response.in_progress", { response: begun });
  output.forEach((item, output_index) => {
    out.emit("response.output_item.added", { output_index, item: opened(item) });
    itemBody(out, item, output_index);
    out.emit("response.output_item.done", { output_index, item });
  });
  out.emit(TERMINAL[String(response.status)] ?? "response.completed", { response });
  return out.events;
}
