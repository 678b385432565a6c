// Chat completion (non-streaming) -> Anthropic message (reference §3.6, §3.9): the upstream's reasoning as a thinking
// block (reasoning.ts), a text block if non-empty, then one tool_use per call; stop reasons and usage mapped (cached
// tokens taken out of input_tokens). The answer has every field Anthropic's has (the SDK types them required), null
// where chat does not say: a text block's citations, usage's cache_creation and others (the usage codec).
import { anthropicMessageUsage } from "../../codecs/anthropic-messages/usage.ts";
import { upstreamStopOf, type UpstreamStop } from "../upstream-stop.ts";
import { parseArgs } from "../chat-to-messages/request.ts";
import { reasoningText, thinkingSignature, type ThinkingScope } from "./reasoning.ts";

const STOP: Record<string, string> = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", function_call: "tool_use", content_filter: "refusal" };

/** A refusal (message.refusal, delta.refusal) that ends normally or unsaid is Anthropic's "refusal" stop (protocols.md §3.11). */
export const stopReasonOf = (finish: string | null | undefined, refused = false): string =>
  refused && (!finish || finish === "stop") ? "refusal" : (finish && STOP[finish]) || "end_turn";

/**
 * stop_reason and stop_sequence: from what the upstream said where chat's finish_reason folds it (upstream-stop.ts:
 * a stop sequence and which one, a full context window), else from the finish_reason. A chat upstream does not say
 * which stop sequence matched (OpenAI's "stop" is either): end_turn, stop_sequence null (protocols.md §3.6).
 */
export function messageStopOf(finish: string | null | undefined, refused: boolean, upstream: UpstreamStop | undefined): { stop_reason: string; stop_sequence: string | null } {
  if (upstream?.reason === "stop_sequence") return { stop_reason: "stop_sequence", stop_sequence: upstream.sequence };
  if (upstream) return { stop_reason: upstream.reason, stop_sequence: null };
  return { stop_reason: stopReasonOf(finish, refused), stop_sequence: null };
}

export const messageIdOf = (id: unknown): string => (typeof id === "string" && id.startsWith("msg_") ? id : `msg_${typeof id === "string" && id ? id.replace(/^chatcmpl-/, "") : Date.now().toString(36)}`);

export function chatToMessagesResponse(chat: any, scope: ThinkingScope): Record<string, unknown> {
  const choice = chat?.choices?.[0] ?? {};
  const m = choice.message ?? {};
  const content: Record<string, unknown>[] = [];
  const reasoning = reasoningText(m);
  const details: unknown[] = Array.isArray(m.reasoning_details) ? m.reasoning_details : [];
  if (reasoning.text || details.length) content.push({ type: "thinking", thinking: reasoning.text, signature: thinkingSignature(scope, details, reasoning.field) });
  const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((p: any) => p.text ?? "").join("") : "";
  if (text) content.push({ type: "text", text, citations: null });
  else if (typeof m.refusal === "string" && m.refusal) content.push({ type: "text", text: m.refusal, citations: null });
  for (const tc of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    // `caller` says who made the call: the model itself (the API's tool_use blocks always carry it; the SDK types it required).
    content.push({ type: "tool_use", id: tc.id, name: tc.function?.name, input: parseArgs(tc.function?.arguments ?? ""), caller: { type: "direct" } });
  }
  return {
    id: messageIdOf(chat?.id),
    type: "message",
    role: "assistant",
    model: chat?.model,
    content,
    ...messageStopOf(choice.finish_reason, typeof m.refusal === "string" && m.refusal !== "", upstreamStopOf(chat)),
    usage: anthropicMessageUsage(chat?.usage, chat?.service_tier),
  };
}
