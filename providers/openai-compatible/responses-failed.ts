// The response.failed event a relayed Responses stream ends with when its upstream stops mid-response (the
// connection cut, the body ended before a terminal event): the client gets the two events a translated stream gives
// it (providers/translate/responses-to-chat/stream.ts) — the response with the items output so far, status failed,
// error {code, message} — and then the gateway's `error` event. Only the few events that carry the response or a
// whole item are parsed: deltas pass unread, so an item cut while open is there as it began, status incomplete
// (a translated stream's has its text so far: keeping the deltas' text here cost the relay ~10 % more CPU per
// stream, measured), and usage is null (the upstream reports it only in the terminal event; docs/responses.md).
import type { SseEvent } from "../../core/sse/parse.ts";

/** An event's JSON, or undefined: an event the relay cannot read is still relayed as it came. */
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

  /** The response.failed event, numbered `sequence`. */
  failed(sequence: number | undefined, err: { status?: number; message?: string }): SseEvent {
    const code = err.status === 429 ? "rate_limit_exceeded" : "server_error";
    const response = {
      object: "response", ...this.response, status: "failed", error: { code, message: err.message ?? "upstream failure" },
      incomplete_details: null, output: this.items.filter(Boolean), usage: null,
    };
    const data = { type: "response.failed", ...(sequence === undefined ? {} : { sequence_number: sequence }), response };
    return { event: "response.failed", data: JSON.stringify(data) };
  }
}
