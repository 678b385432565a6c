// Anthropic message (non-streaming) -> chat completion (reference §3.6, §3.7, §3.9).
// Thinking survives as message.reasoning_content plus reasoning_details and thinking_blocks carrying the signatures,
// which the request translator replays unchanged on the next turn (see reasoning.ts). Web search sources cited in text
// blocks are message.annotations (citations.ts).
import { anthropicToOpenAIUsage } from "../../codecs/anthropic-messages/usage.ts";
import { reasoningDetail, type ReasoningBlock } from "./reasoning.ts";
import { addWebCitations } from "./citations.ts";
import type { UrlCitation } from "../url-citation.ts";
import { chatServiceTier } from "./service-tier.ts";

const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

export const finishReasonOf = (stop: string | null | undefined): string => (stop && FINISH[stop]) || "stop";

/** `jsonTool`: the tool standing in for response_format (its input is the JSON answer, never a tool call). */
export function messagesToChatResponse(msg: any, created = Math.floor(Date.now() / 1000), jsonTool?: string): Record<string, unknown> {
  let text = "";
  let reasoning = "";
  const thinkingBlocks: ReasoningBlock[] = [];
  const toolCalls: unknown[] = [];
  const annotations: UrlCitation[] = [];
  for (const b of Array.isArray(msg.content) ? msg.content : []) {
    if (b.type === "text") {
      const start = text.length;
      text += b.text;
      if (b.citations) addWebCitations(b.citations, start, text.length, annotations);
    }
    else if (b.type === "thinking") {
      reasoning += b.thinking;
      thinkingBlocks.push({ type: "thinking", thinking: b.thinking, signature: b.signature });
    } else if (b.type === "redacted_thinking") thinkingBlocks.push({ type: "redacted_thinking", data: b.data });
    else if (b.type === "tool_use" && jsonTool && b.name === jsonTool) continue;
    else if (b.type === "tool_use") toolCalls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
  }
  // JSON mode: the tool's input is the whole answer (any preamble text would make it invalid JSON); the first one if
  // called twice, as the stream does. Beside it, the client's own calls stay tool_calls, and finish_reason says so.
  const json = jsonTool ? (msg.content ?? []).find((b: any) => b.type === "tool_use" && b.name === jsonTool) : undefined;
  if (json) text = JSON.stringify(json.input ?? {});
  const refusal = msg.stop_reason === "refusal" && msg.stop_details?.explanation ? String(msg.stop_details.explanation) : null;
  // OpenAI's refusal answer has content null beside its refusal, as an answer of tool calls only does.
  const message: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length || refusal ? null : ""), refusal };
  if (toolCalls.length) message.tool_calls = toolCalls;
  // Not in JSON mode: the content is then the tool's JSON, not the cited text.
  if (annotations.length && !json) message.annotations = annotations;
  if (thinkingBlocks.length) {
    message.reasoning_content = reasoning;
    message.reasoning_details = thinkingBlocks.map(reasoningDetail);
    message.thinking_blocks = thinkingBlocks;
  }
  const tier = chatServiceTier(msg.usage?.service_tier);
  return {
    id: msg.id,
    object: "chat.completion",
    created,
    model: msg.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: jsonTool && msg.stop_reason === "tool_use" && !toolCalls.length ? "stop" : finishReasonOf(msg.stop_reason) }],
    usage: anthropicToOpenAIUsage(msg.usage),
    ...(tier ? { service_tier: tier } : {}),
  };
}
