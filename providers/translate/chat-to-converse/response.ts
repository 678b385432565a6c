// Converse response -> chat completion (reference §2.3, §2.9). Usage: Converse's inputTokens exclude cache reads and
// writes, so prompt_tokens = input + read + write with cached_tokens = read; signed reasoning (Claude) survives as
// reasoning_content plus reasoning_details/thinking_blocks, which the request side replays on the next turn. In JSON
// mode (json-output.ts) the JSON tool's input is the answer: the message content, finish_reason stop (tool_calls when
// the client's tools are called beside it). Bedrock's structured outputs (output-config.ts) answer as plain text.
import { randomBytes } from "node:crypto";
import type { Usage } from "../../../core/contracts/provider.ts";
import { reasoningDetail, type ReasoningBlock } from "../chat-to-messages/reasoning.ts";
import { markStop } from "../upstream-stop.ts";
import { converseStopOf } from "./stop-sequence.ts";
import { chatServiceTier } from "./service-tier.ts";

export function finishReasonOf(reason: string | undefined): string {
  switch (reason) {
    case "tool_use": return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded": return "length";
    case "guardrail_intervened":
    case "content_filtered": return "content_filter";
    default: return "stop"; // end_turn, stop_sequence, malformed_* and unknown values
  }
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export function fromConverseUsage(u: any): Usage {
  const usage: Usage = { inputTokens: num(u?.inputTokens), outputTokens: num(u?.outputTokens) };
  const read = num(u?.cacheReadInputTokens);
  // cacheDetails splits the writes by TTL (reference §2.3); Claude's 1-hour writes cost more than 5-minute ones.
  let oneHour = 0;
  if (Array.isArray(u?.cacheDetails)) for (const d of u.cacheDetails) if (d?.ttl === "1h") oneHour += num(d.inputTokens);
  const write = Math.max(num(u?.cacheWriteInputTokens), oneHour);
  if (read) usage.cacheReadTokens = read;
  if (write) usage.cacheWriteTokens = write;
  if (oneHour) usage.cacheWrite1hTokens = oneHour;
  return usage;
}

export function converseToOpenAIUsage(u: any): Record<string, unknown> {
  const read = num(u?.cacheReadInputTokens);
  const write = num(u?.cacheWriteInputTokens);
  const prompt = num(u?.inputTokens) + read + write;
  const completion = num(u?.outputTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

export const chatId = () => `chatcmpl-${randomBytes(12).toString("hex")}`;

/**
 * `jsonTool`: the tool standing in for response_format on Claude (its input is the JSON answer). `stops`: the stop
 * sequences sent, for the one that matched (stop-sequence.ts). `oneCall`: the client sent parallel_tool_calls: false,
 * which Converse has no field for (nor Claude's disable_parallel_tool_use): only the first tool call is kept, as on
 * Gemini (chat-to-gemini/response.ts); the usage stays what the model generated.
 */
export function converseToChatResponse(c: any, model: string, created = Math.floor(Date.now() / 1000), jsonTool?: string, stops: readonly string[] = [], oneCall = false): Record<string, unknown> {
  let text = "";
  let reasoning = "";
  const blocks: ReasoningBlock[] = [];
  const toolCalls: unknown[] = [];
  let json: unknown;
  for (const b of c?.output?.message?.content ?? []) {
    if (typeof b?.text === "string") text += b.text;
    else if (b?.toolUse && jsonTool && b.toolUse.name === jsonTool) json ??= b.toolUse.input ?? {};
    else if (b?.toolUse) {
      if (!oneCall || !toolCalls.length) toolCalls.push({ id: b.toolUse.toolUseId, type: "function", function: { name: b.toolUse.name, arguments: JSON.stringify(b.toolUse.input ?? {}) } });
    } else if (b?.reasoningContent?.reasoningText) {
      const r = b.reasoningContent.reasoningText;
      reasoning += r.text ?? "";
      if (r.signature) blocks.push({ type: "thinking", thinking: r.text ?? "", signature: r.signature });
    } else if (typeof b?.reasoningContent?.redactedContent === "string") blocks.push({ type: "redacted_thinking", data: b.reasoningContent.redactedContent });
  }
  // JSON mode: the JSON tool's input is the whole answer (any preamble text would make it invalid JSON).
  if (json !== undefined) text = JSON.stringify(json);
  const message: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length ? null : ""), refusal: null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (blocks.length) {
    message.reasoning_details = blocks.map(reasoningDetail);
    message.thinking_blocks = blocks;
  }
  const tier = chatServiceTier(c?.serviceTier);
  return markStop({
    id: chatId(),
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: json !== undefined && c?.stopReason === "tool_use" && !toolCalls.length ? "stop" : finishReasonOf(c?.stopReason) }],
    usage: converseToOpenAIUsage(c?.usage),
    ...(tier ? { service_tier: tier } : {}),
  }, converseStopOf(c?.stopReason, c?.additionalModelResponseFields, stops));
}
