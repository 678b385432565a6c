// A previous answer's reasoning text that a translation gives back to the chat host that produced it (a Responses
// reasoning item's summary): the client sent no such field, so whether it goes, and in which field, is the host's
// convention (openai-compatible/reasoning-fields.ts) — DeepSeek's thinking mode refuses a tool loop without it, while
// a host the gateway does not know gets the request as the client sent it, and a strict one refuses an extra field.
// It rides on the assistant message under a non-enumerable symbol key: never serialised, so a chat driver that does
// not place it sends nothing.
export const REPLAYED_TEXT: unique symbol = Symbol("mg.replayedReasoningText");

/** Adds `text` to the reasoning text given back on assistant message `m` (a turn's several items: joined). */
export function addReplayedText(m: object, text: string): void {
  const had = replayedText(m);
  Object.defineProperty(m, REPLAYED_TEXT, { value: had ? `${had}\n\n${text}` : text, configurable: true, writable: true });
}

/** The reasoning text a translation gives back on assistant message `m`, if any. */
export function replayedText(m: unknown): string | undefined {
  const t = (m as { [REPLAYED_TEXT]?: unknown } | null | undefined)?.[REPLAYED_TEXT];
  return typeof t === "string" && t ? t : undefined;
}
