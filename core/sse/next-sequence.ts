// The sequence_number the gateway's own Responses `error` event (core/http/respond.ts) takes: whatever numbered the
// stream's events last (the chat translator, the native relay, the guardrails stage) leaves it on the error. A
// registered symbol, so a copy of this module in a plugin's bundle agrees.
const NEXT_SEQUENCE = Symbol.for("model-gateway.responses.next-sequence");

/** Leaves `next` on `err` (when it is an object) for the error event to continue the numbering from. */
export function setNextSequence(err: unknown, next: number): void {
  if (err !== null && typeof err === "object") (err as Record<symbol, unknown>)[NEXT_SEQUENCE] = next;
}

/** The number left on `err`, if any. */
export function nextSequenceOf(err: unknown): number | undefined {
  const n = err !== null && typeof err === "object" ? (err as Record<symbol, unknown>)[NEXT_SEQUENCE] : undefined;
  return typeof n === "number" ? n : undefined;
}
