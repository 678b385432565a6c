// The text of a chat message, for the translators whose upstreams take a turn's text as one string (Gemini, Bedrock
// Converse); chat-to-messages keeps parts apart, as Anthropic takes them.

/** A message's text: the string, or its text parts joined by newlines (other parts are not text). */
export function textOf(content: any): string {
  if (typeof content === "string") return content;
  return (content ?? []).filter((p: any) => p?.type === "text").map((p: any) => p.text).join("\n");
}

/**
 * An assistant turn's text: its refusal parts are what the model said that turn, as its text parts are (as on
 * Anthropic, chat-to-messages); the refusal field beside no content (an answer relayed back as it came) likewise.
 */
export function assistantText(m: any): string {
  const parts = Array.isArray(m.content) ? m.content.map((p: any) => (p?.type === "refusal" ? { type: "text", text: p.refusal } : p)) : m.content;
  const t = textOf(parts ?? "");
  return t || (typeof m.refusal === "string" ? m.refusal : "");
}
