// Chat completion (non-streaming) -> Anthropic message (reference §3.6, §3.9): the upstream's reasoning as a thinking
// block (reasoning.ts), a text block if non-empty, then one tool_use per call; stop reasons and usage mapped (cached
// tokens taken out of input_tokens).
import { openAIToAnthropicUsage } from "../../codecs/anthropic-messages/usage.ts";
import { parseArgs } from "../chat-to-messages/request.ts";
import { reasoningText, thinkingSignature, type ThinkingScope } from "./reasoning.ts";

const STOP: Record<string, string> = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", function_call: "tool_use", content_filter: "refusal" };

/** A refusal (message.refusal, delta.refusal) that ends normally or unsaid is Anthropic's "refusal" stop (protocols.md §3.11). */
export const stopReasonOf = (finish: string | null | undefined, refused = false): string =>
  refused && (!finish || finish === "stop") ? "refusal" : (finish && STOP[finish]) || "end_turn";

export const messageIdOf = (id: unknown): string => (typeof id === "string" && id.startsWith("msg_") ? id : `msg_${typeof id === "string" && id ? id.replace(/^chatcmpl-/, "") : Date.now().toString(36)}`);

export function chatToMessagesResponse(chat: any, scope: ThinkingScope): Record<string, unknown> {
  const choice = chat?.choices?.[0] ?? {};
  const m = choice.message ?? {};
  const content: Record<string, unknown>[] = [];
  const reasoning = reasoningText(m);
  const details: unknown[] = Array.isArray(m.reasoning_details) ? m.reasoning_details : [];
  if (reasoning.text || details.length) content.push({ type: "thinking", thinking: reasoning.text, signature: thinkingSignature(scope, details, reasoning.field) });
  const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((p: any) => p.text ?? "").join("") : "";
  if (text) content.push({ type: "text", text });
  else if (typeof m.refusal === "string" && m.refusal) content.push({ type: "text", text: m.refusal });
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
    stop_reason: stopReasonOf(choice.finish_reason, typeof m.refusal === "string" && m.refusal !== ""),
    stop_sequence: null,
    usage: openAIToAnthropicUsage(chat?.usage),
  };
}
