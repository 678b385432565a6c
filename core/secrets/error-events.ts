// The stream side of masking: an upstream's in-band error event relayed as it came (a native passthrough) is the
// one piece of upstream error text that is not a GatewayError (those are masked as they are built, core/errors.ts).
import type { SseEvent } from "../sse/parse.ts";
import { redact, redactDeep } from "./registry.ts";

/**
 * Whether an event may carry an upstream's error text: the named error events of the messages and Responses
 * protocols (`error`, `response.failed`), and unnamed ones whose JSON starts as an error does. A few string
 * comparisons per event: it runs on every streamed event.
 */
export function isErrorEvent(ev: SseEvent): boolean {
  const name = ev.event;
  if (name !== undefined) return name === "error" || name === "response.failed";
  // One character tells most events apart: `{"e…` (an error), `{"t…` (a typed event), anything else (`{"id"…`).
  const d = ev.data;
  const c = d.charCodeAt(2);
  if (c === 101) return d.startsWith('{"error"');
  if (c === 116) return d.startsWith('{"type":"error"') || d.startsWith('{"type":"response.failed"');
  return false;
}

/** Masks an error event's data in place (the event may carry more for the stages after dispatch). */
export function redactErrorEvent(ev: SseEvent): SseEvent {
  let data: string;
  try {
    data = JSON.stringify(redactDeep(JSON.parse(ev.data)));
  } catch {
    data = redact(ev.data);
  }
  if (data !== ev.data) ev.data = data;
  return ev;
}
