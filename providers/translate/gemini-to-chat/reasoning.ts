// Reasoning on the Gemini side, both ways. A Gemini client keeps a model turn's reasoning state in `thoughtSignature`:
// Gemini CLI drops thought parts from its history but keeps the signatures on the other parts, and adds a placeholder
// (`skip_thought_signature_validator`) to a function call that has none. So the upstream's reasoning rides as the
// gateway's reasoning blob (responses-to-chat/reasoning.ts: `mgr1.` + base64url JSON, the protocol that made it, its
// entries) in the thoughtSignature of the first non-thought part that follows it — the text or function call the
// client keeps — and is replayed from there, to the protocol that made it only. The blob holds the signed reasoning
// (Anthropic thinking blocks with their signatures, redacted blocks: chat `reasoning_details`) and, for a chat
// upstream, its plain reasoning text and the field it came in (reasoning_content: DeepSeek refuses a tool loop
// without it; reasoning: Groq; the chat driver puts the text where its host takes it back, if anywhere:
// replayed-reasoning-text.ts), as messages-to-chat/reasoning.ts keeps them — but with the text itself, since the
// client keeps no thought text to replay it from. Thought text goes out as `thought: true` parts when the request
// asked for them (includeThoughts), as Gemini does.
import { decodeReasoning, encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { reasoningText } from "../messages-to-chat/reasoning.ts";

/** The upstream protocol the chat body goes on to: it decides which blobs replay. */
export type GeminiFlavor = "chat" | "messages" | "converse";

export interface BlobScope { flavor: GeminiFlavor; provider: string }

/** A turn's plain reasoning text and the chat field it came in (messages-to-chat's reasoningText). */
export type ReasoningText = ReturnType<typeof reasoningText>;

/**
 * The blob for a turn's reasoning, or undefined when there is nothing to replay. Only a chat upstream gets its text
 * back: Anthropic's text is inside its signed details already.
 */
export function signatureFor(details: unknown[], scope: BlobScope, text: ReasoningText = { text: "" }): string | undefined {
  const field = scope.flavor === "chat" && text.text ? text.field : undefined;
  if (!details.length && !field) return undefined;
  return encodeReasoning(scope.flavor, details, scope.provider, field, field ? text.text : undefined);
}

/**
 * What a model turn's parts give back to this upstream: reasoning_details and, for a chat upstream, the reasoning text
 * (other protocols' blobs and Gemini's own signatures are left out). The text goes as a translation's reasoning text,
 * which the chat driver places only where the host's convention takes it back (replayed-reasoning-text.ts).
 */
export function replayedReasoning(parts: any[], scope: BlobScope): { details: unknown[]; text: string } {
  const details: unknown[] = [];
  let text = "";
  const seen = new Set<string>();
  for (const p of parts) {
    const sig = p?.thoughtSignature;
    if (typeof sig !== "string" || seen.has(sig)) continue;
    seen.add(sig);
    const blob = decodeReasoning(sig);
    if (!blob || blob.p !== scope.flavor || (scope.flavor === "chat" && blob.n !== scope.provider)) continue;
    details.push(...blob.d);
    // Only a text that came in a chat field reasoningText knows.
    if (blob.t) text += reasoningText({ [blob.t]: blob.x }).text;
  }
  return { details, text };
}
