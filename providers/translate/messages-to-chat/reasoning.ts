// Thinking for a Messages client whose model is reached through chat (a chat upstream; Gemini and Bedrock Converse
// behind chat), both ways:
// - asked: `thinking` (enabled with budget_tokens, or adaptive at output_config.effort) becomes reasoning_effort on a
//   model that can think (catalog tag `reasoning`; a budget is rounded up to an effort, as outputAsk reserves it), and
//   Gemini is asked for its thought text (includeThoughts, through the reasoningSummary knob) as Anthropic returns
//   it. On a model that cannot think, or a Converse model other than Claude, it is dropped and named.
// - answered: the upstream's reasoning comes back as a thinking block: its text (reasoning_content or reasoning) and,
//   as the signature, the gateway's reasoning blob (responses-to-chat/reasoning.ts) holding what a replay needs —
//   the upstream's opaque reasoning (reasoning_details) and the chat field its text came in.
// - replayed: on the next turn a thinking block whose signature is a blob of this upstream (its protocol; for chat,
//   its provider) gives the assistant turn back those reasoning_details and its text, which the chat driver puts in
//   the field its host takes back, if any (replayed-reasoning-text.ts); other thinking
//   blocks (Anthropic's own, another upstream's) are dropped. Gemini's thought signatures need no blob: they ride in
//   the tool_use ids (chat-to-gemini/response.ts), which every client sends back.
import type { Target } from "../../../core/contracts/provider.ts";
import { messagesThinkingEffort } from "../../../core/metering/thinking.ts";
import { fitEffort, thinkingOffFor, type ThinkingOff } from "../../../core/metering/reasoning-efforts.ts";
import { isConverseClaude } from "../../../core/metering/output-limit.ts";
import { decodeReasoning, encodeReasoning, ENCRYPTED_PREFIX } from "../responses-to-chat/reasoning.ts";
import { missingThinking } from "../chat-to-messages/replay.ts";
import { addReplayedText } from "../replayed-reasoning-text.ts";

/** The upstream protocol the chat body goes on to. */
export type MessagesFlavor = "chat" | "gemini" | "converse";

/** Whose reasoning a blob is: the upstream protocol, and for chat the provider (its reasoning formats are its own). */
export interface ThinkingScope { flavor: MessagesFlavor; provider: string }

/** The chat fields a plain reasoning text comes in (DeepSeek/vLLM, and OpenRouter/Groq/vLLM's newer name). */
const TEXT_FIELDS = ["reasoning_content", "reasoning"] as const;

export interface ThinkingAsk {
  /** reasoning_effort for the chat body; undefined: thinking not asked for, or not honoured. */
  effort?: string;
  /** Chat request fields that say thinking off on this model (DeepSeek's thinking), in place of an effort. */
  fields?: Record<string, unknown>;
  dropped: string[];
}

/** What `thinking` (and output_config.effort) become on this target. */
export function thinkingAsk(body: any, target: Target | undefined, flavor: MessagesFlavor): ThinkingAsk {
  const dropped: string[] = [];
  const thinking = body.thinking;
  const asked = thinking !== undefined && thinking !== null && thinking.type !== "disabled";
  const claudeOnly = flavor === "converse" && !isConverseClaude(target?.upstreamModel ?? "");
  let effort = asked && target?.reasoning === true && !claudeOnly ? messagesThinkingEffort(body, flavor === "chat" ? "high" : "max") : undefined;
  if (asked && effort === undefined) dropped.push("thinking");
  // Anthropic returns thinking text unless told not to; the text is what a replay to a chat upstream is made from.
  else if (thinking?.display === "omitted") dropped.push("thinking.display");
  // An effort the chat model does not take (grok-3-mini's medium): the nearest it takes that costs no more, named.
  if (effort !== undefined && flavor === "chat" && target) {
    const fit = fitEffort(target, effort);
    effort = fit.effort;
    if (fit.fitted) dropped.push("thinking");
  }
  const off = thinking?.type === "disabled" && target ? thinkingOff(target, flavor) : undefined;
  if (off) {
    effort = off.effort;
    if (off.named) dropped.push("thinking");
  }
  // output_config.effort sets the effort of adaptive thinking; with a budget, or without thinking, it has no place.
  const outputEffort = body.output_config?.effort;
  if (outputEffort !== undefined && outputEffort !== null && !(effort !== undefined && thinking.type === "adaptive")) dropped.push("output_config.effort");
  return { effort, ...(off?.fields ? { fields: off.fields } : {}), dropped };
}

/**
 * What stands for thinking off on a model that thinks when asked nothing: on a chat model its own off (DeepSeek's
 * thinking field, GPT-5.1's none) or the least effort it takes, named (reasoning-efforts.ts); on a Gemini model that
 * can think (2.5 Flash thinks by default) none, which chat-to-gemini sends as budget 0, or as 2.5 Pro's least budget,
 * named there. Converse Claude thinks only when asked: nothing.
 */
function thinkingOff(target: Target, flavor: MessagesFlavor): ThinkingOff | undefined {
  if (flavor === "chat") return thinkingOffFor(target);
  return flavor === "gemini" && target.reasoning === true ? { effort: "none", named: false } : undefined;
}

/** A thinking block's signature: the upstream's opaque reasoning and the field its text came in, as a blob. */
export function thinkingSignature(scope: ThinkingScope, details: unknown[], textField: string | undefined): string {
  return encodeReasoning(scope.flavor, details, scope.provider, scope.flavor === "chat" ? textField : undefined);
}

/** The chat field a message or delta carries plain reasoning text in, and the text. */
export function reasoningText(m: any): { field?: string; text: string } {
  for (const field of TEXT_FIELDS) if (typeof m?.[field] === "string" && m[field]) return { field, text: m[field] };
  return { text: "" };
}

/**
 * Assistant message `msg` with the reasoning its turn's thinking blocks give back to this upstream (blobs of other
 * scopes dropped): the upstream's reasoning_details, and the blocks' text as a translation's reasoning text, which the
 * chat driver places only where the host's convention takes it back (replayed-reasoning-text.ts: DeepSeek's thinking
 * mode wants it in a tool loop, a strict host the gateway does not know refuses a field the client never sent).
 */
export function withReplayedReasoning(msg: Record<string, unknown>, blocks: any[], scope: ThinkingScope): Record<string, unknown> {
  const details: unknown[] = [];
  let text = "";
  for (const b of blocks) {
    if (b?.type !== "thinking") continue;
    const blob = decodeReasoning(b.signature);
    if (!blob || blob.p !== scope.flavor || (scope.flavor === "chat" && blob.n !== scope.provider)) continue;
    details.push(...blob.d);
    if (blob.t && (TEXT_FIELDS as readonly string[]).includes(blob.t) && typeof b.thinking === "string") text += b.thinking;
  }
  const out = details.length ? { ...msg, reasoning_details: details } : { ...msg };
  if (text) addReplayedText(out, text);
  return out;
}

const isGatewayThinking = (b: any) => b?.type === "thinking" && !(typeof b.signature === "string" && b.signature && !b.signature.startsWith(ENCRYPTED_PREFIX));

/**
 * A Messages body for an upstream serving Messages itself (Anthropic, Vertex and Bedrock Claude) without the thinking
 * blocks the gateway made for a translated one, or any without a signature: Anthropic refuses both (a conversation may
 * cross from another model to Claude by fallback or a model switch). When that leaves the tool loop the request
 * continues without the thinking Anthropic wants first, thinking is off for this request and named. Returns the body
 * unchanged when there are none.
 */
export function withoutGatewayThinking(body: any): { body: any; dropped: string[] } {
  const messages = body?.messages;
  if (!Array.isArray(messages) || !messages.some((m: any) => m?.role === "assistant" && Array.isArray(m.content) && m.content.some(isGatewayThinking))) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = messages.map((m: any, i: number) => {
    if (m?.role !== "assistant" || !Array.isArray(m.content) || !m.content.some(isGatewayThinking)) return m;
    return { ...m, content: m.content.filter((b: any, j: number) => (isGatewayThinking(b) ? (dropped.push(`messages[${i}].content[${j}]`), false) : true)) };
  }).filter((m: any) => !(m?.role === "assistant" && Array.isArray(m.content) && !m.content.length)); // a turn of thinking alone: gone (the API joins the turns around it)
  const out = { ...body, messages: kept };
  const on = body.thinking && body.thinking.type !== "disabled";
  if (on && missingThinking(kept)) {
    out.thinking = { type: "disabled" };
    dropped.push("thinking");
  }
  return { body: out, dropped };
}
