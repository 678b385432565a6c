// Usage conversions around the Anthropic shape. Anthropic's input_tokens, cache_creation_input_tokens and
// cache_read_input_tokens are disjoint; OpenAI's cached_tokens is a subset of prompt_tokens (reference §3.7).
import type { Usage } from "../../../core/contracts/provider.ts";
import { cacheReadTokensOf, cacheWriteTokensOf } from "../openai-chat-usage.ts";

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export function fromAnthropicUsage(u: any): Usage {
  const usage: Usage = { inputTokens: num(u?.input_tokens), outputTokens: num(u?.output_tokens) };
  const read = num(u?.cache_read_input_tokens);
  // cache_creation splits the writes by TTL: 1-hour writes cost more (2x input, 5-minute ones 1.25x).
  const fiveMin = num(u?.cache_creation?.ephemeral_5m_input_tokens);
  const oneHour = num(u?.cache_creation?.ephemeral_1h_input_tokens);
  const write = Math.max(num(u?.cache_creation_input_tokens), fiveMin + oneHour);
  if (read) usage.cacheReadTokens = read;
  if (write) usage.cacheWriteTokens = write;
  if (oneHour) usage.cacheWrite1hTokens = oneHour;
  const thinking = num(u?.output_tokens_details?.thinking_tokens);
  if (thinking) usage.reasoningTokens = thinking;
  // Server tools Anthropic bills per use: web_search (web_fetch is free; code execution is billed by time).
  const searches = num(u?.server_tool_use?.web_search_requests);
  if (searches) usage.webSearches = searches;
  return usage;
}

/** Anthropic usage -> OpenAI usage object (prompt_tokens counts every input token, cached ones included). */
export function anthropicToOpenAIUsage(u: any): Record<string, unknown> {
  const read = num(u?.cache_read_input_tokens);
  const write = num(u?.cache_creation_input_tokens);
  const prompt = num(u?.input_tokens) + read + write;
  const completion = num(u?.output_tokens);
  const out: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
  const thinking = num(u?.output_tokens_details?.thinking_tokens);
  if (thinking) out.completion_tokens_details = { reasoning_tokens: thinking };
  return out;
}

/** OpenAI usage object -> Anthropic usage (cached tokens taken out of input_tokens, never added on top). */
export function openAIToAnthropicUsage(u: any): AnthropicUsage {
  const read = cacheReadTokensOf(u);
  const write = cacheWriteTokensOf(u);
  return {
    input_tokens: Math.max(0, num(u?.prompt_tokens) - read - write),
    output_tokens: num(u?.completion_tokens),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  };
}

/**
 * The usage of a Messages answer (and of its stream's message_start) made of an OpenAI usage object, with every field
 * Anthropic's Usage has, as the API sends it and the SDK types it (required, null allowed): null where chat does not
 * say. cache_creation splits the writes by TTL, which chat does not carry; service_tier is the tier the upstream says
 * served it, by Anthropic's name (OpenAI's "default" is Anthropic's "standard"), null for one Anthropic has not.
 * output_tokens_details stays null: the reasoning count is not Anthropic's thinking_tokens.
 */
export function anthropicMessageUsage(u: any, serviceTier?: unknown): Record<string, unknown> {
  return {
    ...openAIToAnthropicUsage(u),
    cache_creation: null,
    server_tool_use: null,
    service_tier: serviceTier === "default" ? "standard" : serviceTier === "priority" ? "priority" : null,
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  };
}

/** message_delta's usage made of an OpenAI usage object: the fields of the SDK's MessageDeltaUsage, null where chat does not say. */
export function anthropicDeltaUsage(u: any): Record<string, unknown> {
  return { ...openAIToAnthropicUsage(u), output_tokens_details: null, server_tool_use: null };
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
