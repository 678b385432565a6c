// An assistant prefill: a Messages request whose last turn is the assistant's, text the answer must continue
// (`{"answer":`). Anthropic continues it, and clients join prefill + answer; a chat completions upstream answers a
// turn of its own after it instead, so the joined text is broken. It is still sent (the model sees the turn), but named
// in x-mg-dropped-params as the client's message (`messages[1]`): the client can tell its prefill was not honoured.

/** The client's field of a prefill in `messages` (a Messages body's), or undefined when the request has none. */
export function prefillField(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || !messages.length) return undefined;
  const last = messages.length - 1;
  const m = messages[last];
  if (m?.role !== "assistant") return undefined;
  const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.filter((b: any) => b?.type === "text").map((b: any) => b.text ?? "").join("") : "";
  return text ? `messages[${last}]` : undefined;
}
