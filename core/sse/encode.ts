// SSE emitters for the client protocols (reference §5): single-line JSON, every event ends with a blank line.
import type { SseEvent } from "./parse.ts";

/** `event:` line only when the event is named (messages protocol); chat streams are data-only. */
export function encodeSse(ev: SseEvent): string {
  return encodeWith(ev, "\n");
}

/**
 * The same event with CRLF line ends, for a Gemini-protocol client (reference §5: `data: <json>\r\n\r\n`, as the
 * real API frames it, and as the gateway's own Gemini error and blocked frames end): a client that splits events on
 * `\r\n\r\n` read an LF-framed stream as one unparseable event.
 */
export function encodeSseCrlf(ev: SseEvent): string {
  return encodeWith(ev, "\r\n");
}

function encodeWith(ev: SseEvent, eol: "\n" | "\r\n"): string {
  if (ev.comment !== undefined) return `: ${ev.comment}${eol}${eol}`;
  // An upstream may split an event's data over several `data:` lines (legal SSE; the parser joins them with "\n"):
  // written as it came, the lines after the first would have no field name.
  const data = ev.data.indexOf("\n") === -1 ? ev.data : oneLine(ev.data, eol);
  return ev.event === undefined ? `data: ${data}${eol}${eol}` : `event: ${ev.event}${eol}data: ${data}${eol}${eol}`;
}

/**
 * Data that holds line breaks, made fit for one `data:` field. JSON goes out on one line (some clients, the legacy
 * Google SDK, read one line of JSON per event): a raw line break in valid JSON can only be whitespace between
 * tokens, so a space stands in for it, every value as it was (no re-serialising: big numbers keep their digits).
 * Anything else goes out as one `data:` line per line, which every SSE parser joins back.
 */
function oneLine(data: string, eol: "\n" | "\r\n"): string {
  try {
    JSON.parse(data);
    return data.replaceAll("\n", " ");
  } catch {
    return data.replaceAll("\n", `${eol}data: `);
  }
}

/**
 * No `connection` header: Node says keep-alive or close as the request and the server's state ask (a client's
 * `Connection: close`, HTTP/1.0, a draining server, an unanswered 100-continue). A fixed `keep-alive` overrode all of
 * those and held the socket open for keep_alive_timeout_ms after the stream's last event.
 */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};
