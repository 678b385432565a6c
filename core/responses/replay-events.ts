// A stored response as the Responses stream that makes it (GET /responses/{id}?stream=true, what the openai SDK's
// retrieve(id, {stream: true}) and responses.stream({response_id}) read): response.created and in_progress, then per
// output item output_item.added, its content as one delta per part (output_text with its annotations and logprobs, a
// refusal, a function call's arguments, a custom tool's input, a reasoning item's summary and text), output_item.done
// with the item as stored, and the terminal event of its status carrying the whole response. Numbered from 0, the
// same for every replay of the same response (so starting_after means the same each time); not the numbering of the
// stream that created it, whose deltas were cut where its upstream cut them. Made lazily, one event at a time, and
// those up to starting_after are counted, not written out: a replay of a large response holds one event, not all
// of them (each text is in five: its delta and four done events), and stops being made when its reader stops.
import type { SseEvent } from "../sse/parse.ts";

type Json = Record<string, any>;

const TERMINAL: Record<string, string> = { completed: "response.completed", incomplete: "response.incomplete", failed: "response.failed" };

/** An event before it is numbered: its type and payload. */
type Unnumbered = [type: string, payload: Json];

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
function* messagePart(at: Json, part: Json): Generator<Unnumbered> {
  if (part.type === "output_text") {
    yield ["response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }];
    const logprobs = Array.isArray(part.logprobs) ? part.logprobs : [];
    if (part.text) yield ["response.output_text.delta", { ...at, delta: part.text, logprobs }];
    const annotations: unknown[] = Array.isArray(part.annotations) ? part.annotations : [];
    for (let annotation_index = 0; annotation_index < annotations.length; annotation_index++) {
      yield ["response.output_text.annotation.added", { ...at, annotation_index, annotation: annotations[annotation_index] }];
    }
    yield ["response.output_text.done", { ...at, text: part.text ?? "", logprobs }];
  } else if (part.type === "refusal") {
    yield ["response.content_part.added", { ...at, part: { type: "refusal", refusal: "" } }];
    if (part.refusal) yield ["response.refusal.delta", { ...at, delta: part.refusal }];
    yield ["response.refusal.done", { ...at, refusal: part.refusal ?? "" }];
  } else {
    yield ["response.content_part.added", { ...at, part }];
  }
  yield ["response.content_part.done", { ...at, part }];
}

const listOf = (v: unknown): Json[] => (Array.isArray(v) ? v : []);

/** What comes between an item's added and done events. */
function* itemBody(item: Json, output_index: number): Generator<Unnumbered> {
  const item_id = item.id;
  switch (item.type) {
    case "message": {
      const parts = listOf(item.content);
      for (let content_index = 0; content_index < parts.length; content_index++) yield* messagePart({ item_id, output_index, content_index }, parts[content_index]!);
      return;
    }
    case "function_call":
      if (item.arguments) yield ["response.function_call_arguments.delta", { item_id, output_index, delta: item.arguments }];
      yield ["response.function_call_arguments.done", { item_id, output_index, name: item.name, arguments: item.arguments ?? "" }];
      return;
    case "custom_tool_call":
      if (item.input) yield ["response.custom_tool_call_input.delta", { item_id, output_index, delta: item.input }];
      yield ["response.custom_tool_call_input.done", { item_id, output_index, input: item.input ?? "" }];
      return;
    case "reasoning": {
      const summary = listOf(item.summary);
      for (let summary_index = 0; summary_index < summary.length; summary_index++) {
        const part = summary[summary_index]!;
        const at = { item_id, output_index, summary_index };
        yield ["response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } }];
        if (part.text) yield ["response.reasoning_summary_text.delta", { ...at, delta: part.text }];
        yield ["response.reasoning_summary_text.done", { ...at, text: part.text ?? "" }];
        yield ["response.reasoning_summary_part.done", { ...at, part }];
      }
      const content = listOf(item.content);
      for (let content_index = 0; content_index < content.length; content_index++) {
        const part = content[content_index]!;
        const at = { item_id, output_index, content_index };
        yield ["response.content_part.added", { ...at, part: { type: part.type, text: "" } }];
        if (part.text) yield ["response.reasoning_text.delta", { ...at, delta: part.text }];
        yield ["response.reasoning_text.done", { ...at, text: part.text ?? "" }];
        yield ["response.content_part.done", { ...at, part }];
      }
      return;
    }
  }
}

/** The events of `response` in order, not yet numbered. */
function* unnumbered(response: Json): Generator<Unnumbered> {
  const output = listOf(response.output);
  const begun = { ...response, status: "in_progress", output: [], usage: null, error: null, incomplete_details: null };
  yield ["response.created", { response: begun }];
  yield ["response.in_progress", { response: begun }];
  for (let output_index = 0; output_index < output.length; output_index++) {
    const item = output[output_index]!;
    yield ["response.output_item.added", { output_index, item: opened(item) }];
    yield* itemBody(item, output_index);
    yield ["response.output_item.done", { output_index, item }];
  }
  yield [TERMINAL[String(response.status)] ?? "response.completed", { response }];
}

/**
 * The events of `response` (a stored response as GET answers it), numbered from 0, those after `startingAfter`
 * only (-1: all), each made when it is asked for.
 */
export function* replayEvents(response: Json, startingAfter = -1): Generator<SseEvent> {
  let sequence_number = 0;
  for (const [type, payload] of unnumbered(response)) {
    if (sequence_number > startingAfter) yield { event: type, data: JSON.stringify({ type, sequence_number, ...payload }) };
    sequence_number++;
  }
}
