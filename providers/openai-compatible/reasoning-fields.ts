// Where an OpenAI-compatible host takes a previous answer's reasoning back on an assistant message. The hosts
// disagree, and clients echo whatever field they use themselves (opencode and Qwen Code send `reasoning_content`
// whichever field the text came in): Groq answers in `reasoning` and refuses `reasoning_content`/`reasoning_details`;
// DeepSeek answers in `reasoning_content` and requires it back on a tool loop; OpenRouter answers in `reasoning` with
// its opaque `reasoning_details`; Mistral refuses any of them. So each assistant message's reasoning is moved to the
// host's field and what the host does not take is dropped — named only when it held something. The convention is the
// provider's `reasoning_field`, else recognised from the base URL (host-conventions.ts); an unknown host gets the
// messages as sent. A translation's reasoning text, which its client sent in no field (replayed-reasoning-text.ts),
// goes only to a host that takes text back, and is never named: the client did not send it.
import type { ReasoningField } from "./host-conventions.ts";
import { replayedText } from "../translate/replayed-reasoning-text.ts";

export { reasoningFieldOf, type ReasoningField } from "./host-conventions.ts";

/** The fields an assistant message may carry a previous answer's reasoning in (LiteLLM's thinking_blocks too). */
const TEXT_FIELDS = ["reasoning_content", "reasoning"] as const;
const OPAQUE_FIELDS = ["reasoning_details", "thinking_blocks"] as const;
const ALL_FIELDS = [...TEXT_FIELDS, ...OPAQUE_FIELDS];

/** Something a client would miss if it went: not absent, null, an empty string or an empty list. */
const holds = (v: unknown) => v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0);

/**
 * The messages with each assistant message's reasoning where `field` says (new objects; the client's are left alone:
 * a fallback to another host reuses them), and the fields dropped that held something (`messages[i].<field>`).
 */
export function fitReasoningFields(messages: unknown, field: ReasoningField): { messages: unknown; dropped: string[] } {
  if (field === "passthrough" || !Array.isArray(messages)) return { messages, dropped: [] };
  const dropped: string[] = [];
  let changed = false;
  const textField = field === "reasoning_content" ? "reasoning_content" : field === "none" ? undefined : "reasoning";
  const out = messages.map((m: any, i: number) => {
    const replayed = m?.role === "assistant" ? replayedText(m) : undefined;
    if (m?.role !== "assistant" || (!ALL_FIELDS.some((k) => k in m) && replayed === undefined)) return m;
    changed = true;
    const fitted = { ...m };
    for (const k of ALL_FIELDS) delete fitted[k];
    // The text: from the host's own field if it has one, else from the other, else a translation's; a second, different
    // text has no place.
    const texts = TEXT_FIELDS.filter((k) => holds(m[k]));
    const source = textField && (texts.includes(textField) ? textField : texts[0]);
    const text = source && typeof m[source] === "string" ? (m[source] as string) : textField ? replayed : undefined;
    if (text !== undefined) fitted[textField!] = text;
    for (const k of texts) if (m[k] !== text) dropped.push(`messages[${i}].${k}`);
    for (const k of OPAQUE_FIELDS) {
      if (!holds(m[k])) continue;
      if (field === "reasoning_details" && k === "reasoning_details") fitted[k] = m[k];
      else dropped.push(`messages[${i}].${k}`);
    }
    return fitted;
  });
  return { messages: changed ? out : messages, dropped };
}
