// Anthropic thinking on the chat side, both ways. A chat client keeps reasoning only in fields it appends back to the
// history with the assistant message, so the signed blocks ride in the conventions clients already keep:
// - `reasoning_details` (OpenRouter): {type:"reasoning.text", text, signature, format, index} for a thinking block,
//   {type:"reasoning.encrypted", data, format, index} for a redacted one; `index` = ordinal among reasoning blocks.
// - `thinking_blocks` (LiteLLM): the Anthropic blocks as they are.
// - `reasoning_content` (DeepSeek/vLLM): the text alone (no signature, so it is never replayed on its own).
// On the way back, an assistant message carrying either array becomes thinking/redacted_thinking blocks again.

export const ANTHROPIC_REASONING_FORMAT = "anthropic-claude-v1";

export interface ThinkingBlock { type: "thinking"; thinking: string; signature: string }
export interface RedactedBlock { type: "redacted_thinking"; data: string }
export type ReasoningBlock = ThinkingBlock | RedactedBlock;

/** One reasoning_details entry for the index-th reasoning block. */
export function reasoningDetail(b: ReasoningBlock, index: number): Record<string, unknown> {
  return b.type === "thinking"
    ? { type: "reasoning.text", text: b.thinking, signature: b.signature, format: ANTHROPIC_REASONING_FORMAT, index }
    : { type: "reasoning.encrypted", data: b.data, format: ANTHROPIC_REASONING_FORMAT, index };
}

/** The thinking blocks an assistant chat message asks to replay, in order; unsigned or foreign reasoning is left out. */
export function replayedThinking(m: any): ReasoningBlock[] {
  const details = Array.isArray(m?.reasoning_details) ? m.reasoning_details : [];
  if (details.length) return fromDetails(details);
  return fromThinkingBlocks(Array.isArray(m?.thinking_blocks) ? m.thinking_blocks : []);
}

/**
 * reasoning_details entries with the same index are pieces of one block (OpenRouter streams them that way): their
 * texts are joined up to the block's signature (a redacted block's data), which ends it. An entry with that index
 * after it is another block: each answer numbers its blocks from 0, and one assistant turn may carry several
 * answers' reasoning (two Responses reasoning items, two Gemini thought signatures) — joined, they would be one block
 * whose signature covers neither text, which Anthropic refuses. Other formats (another provider's encrypted
 * reasoning) cannot be verified by Anthropic and are dropped, as are thinking blocks without a signature (Anthropic
 * rejects them).
 */
function fromDetails(details: any[]): ReasoningBlock[] {
  type Piece = { text: string; signature?: string; data?: string; redacted: boolean };
  const blocks: Piece[] = [];
  /** The unfinished block a further piece with this kind and index belongs to. */
  const open = new Map<string, Piece>();
  for (const d of details) {
    if (!d || typeof d !== "object") continue;
    if (d.format !== undefined && d.format !== null && !String(d.format).startsWith("anthropic-claude")) continue;
    const redacted = d.type === "reasoning.encrypted";
    if (!redacted && d.type !== "reasoning.text") continue;
    // An entry without an index is a block of its own.
    const key = typeof d.index === "number" ? `${redacted ? "e" : "t"}:${d.index}` : undefined;
    let cur = key === undefined ? undefined : open.get(key);
    if (!cur) {
      cur = { text: "", redacted };
      blocks.push(cur);
      if (key !== undefined) open.set(key, cur);
    }
    if (typeof d.text === "string") cur.text += d.text;
    if (typeof d.signature === "string" && d.signature) cur.signature = d.signature;
    if (typeof d.data === "string" && d.data) cur.data = d.data;
    if (key !== undefined && (cur.signature || cur.data)) open.delete(key);
  }
  const out: ReasoningBlock[] = [];
  for (const b of blocks) {
    if (b.redacted && b.data) out.push({ type: "redacted_thinking", data: b.data });
    else if (!b.redacted && b.signature) out.push({ type: "thinking", thinking: b.text, signature: b.signature });
  }
  return out;
}

/** LiteLLM's thinking_blocks; streamed pieces (text first, the signature last) are joined up to their signature. */
function fromThinkingBlocks(blocks: any[]): ReasoningBlock[] {
  const out: ReasoningBlock[] = [];
  let text = "";
  for (const t of blocks) {
    if (t?.type === "redacted_thinking" && typeof t.data === "string") out.push({ type: "redacted_thinking", data: t.data });
    else if (t?.type === "thinking") {
      text += typeof t.thinking === "string" ? t.thinking : "";
      if (typeof t.signature === "string" && t.signature) {
        out.push({ type: "thinking", thinking: text, signature: t.signature });
        text = "";
      }
    }
  }
  return out;
}
