// Reasoning on the Gemini side, both ways. A Gemini client keeps a model turn's reasoning state in `thoughtSignature`:
// Gemini CLI drops thought parts from its history but keeps the signatures on the other parts, and adds a placeholder
// (`skip_thought_signature_validator`) to a function call that has none. So the upstream's signed reasoning (Anthropic
// thinking blocks with their signatures, redacted blocks: chat `reasoning_details`) rides as the gateway's reasoning
// blob (responses-to-chat/reasoning.ts: `mgr1.` + base64url JSON, the protocol that made it, its entries) in the
// thoughtSignature of the first non-thought part that follows it — the text or function call the client keeps — and
// is replayed from there, to the protocol that made it only. Thought text goes out as `thought: true` parts when the
// request asked for them (includeThoughts), as Gemini does.
import { decodeReasoning, encodeReasoning } from "../responses-to-chat/reasoning.ts";

/** The upstream protocol the chat body goes on to: it decides which blobs replay. */
export type GeminiFlavor = "chat" | "messages" | "converse";

export interface BlobScope { flavor: GeminiFlavor; provider: string }

export function signatureFor(details: unknown[], scope: BlobScope): string {
  return encodeReasoning(scope.flavor, details, scope.provider);
}

/** The reasoning_details a model turn's parts carry for this upstream (other protocols' blobs and Gemini's own signatures are left out). */
export function replayedDetails(parts: any[], scope: BlobScope): unknown[] {
  const out: unknown[] = [];
  const seen = new Set<string>();
  for (const p of parts) {
    const sig = p?.thoughtSignature;
    if (typeof sig !== "string" || seen.has(sig)) continue;
    seen.add(sig);
    const blob = decodeReasoning(sig);
    if (!blob || blob.p !== scope.flavor || (scope.flavor === "chat" && blob.n !== scope.provider)) continue;
    out.push(...blob.d);
  }
  return out;
}
