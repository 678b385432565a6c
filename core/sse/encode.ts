// SSE emitters for the client protocols (reference §5): single-line JSON, every event ends with a blank line.
import type { SseEvent } from "./parse.ts";

/** `event:` line only when the event is named (messages protocol); chat streams are data-only. */
export function encodeSse(ev: SseEvent): string {
  return ev.event === undefined ? `data: ${ev.data}\n\n` : `event: ${ev.event}\ndata: ${ev.data}\n\n`;
}

export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};
