// What a Responses stream has told its client of the response so far, for the response.failed event it ends with when
// it stops mid-response: the relay's when its upstream is cut (providers/openai-compatible/responses-stream.ts), the
// gateway's own when it ends the stream (core/http/responses-stream-end.ts). Only the few events that carry the
// response or a whole item are parsed: deltas pass unread, so an item cut while open is there as it began, status
// incomplete (a translated stream's has its text so far: keeping the deltas' text here cost the relay ~10 % more CPU
// per stream, measured), and usage is null (the upstream reports it only in the terminal event; docs/responses.md).
import type { SseEvent } from "../sse/parse.ts";

/** An event's JSON, or undefined: an event that cannot be read is still sent as it came. */
function parsed(data: string): any {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

export class ResponseSoFar {
  private response: Record<string, unknown> | undefined;
  private readonly items: Record<string, unknown>[] = [];

  /** Whether the stream has begun a response (response.created or in_progress was sent). */
  get begun(): boolean {
    return this.response !== undefined;
  }

  /** Keep what an event tells of the response (its envelope, an item begun or done); `type` is the event's. */
  note(type: string | undefined, ev: SseEvent): void {
    if (type !== "response.created" && type !== "response.in_progress" && type !== "response.output_item.added" && type !== "response.output_item.done") return;
    const d = parsed(ev.data);
    if (type === "response.created" || type === "response.in_progress") {
      if (d?.response && typeof d.response === "object") this.response = d.response;
    } else if (typeof d?.output_index === "number" && d.output_index >= 0 && d.item && typeof d.item === "object") {
      this.items[d.output_index] = type === "response.output_item.done" ? d.item : { ...d.item, status: "incomplete" };
    }
  }

  /** The response.failed event, numbered `sequence`, with OpenAI's error `code`. */
  failed(sequence: number | undefined, code: string, message: string): SseEvent {
    const response = {
      object: "response", ...this.response, status: "failed", error: { code, message },
      incomplete_details: null, output: this.items.filter(Boolean), usage: null,
    };
    const data = { type: "response.failed", ...(sequence === undefined ? {} : { sequence_number: sequence }), response };
    return { event: "response.failed", data: JSON.stringify(data) };
  }
}
