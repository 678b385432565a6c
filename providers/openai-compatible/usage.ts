import type { Usage } from "../../core/contracts/provider.ts";

/**
 * OpenAI usage -> canonical. cached_tokens and cache_write_tokens (OpenRouter-style) are subsets of prompt_tokens,
 * reasoning_tokens of completion_tokens: input is what is left, so no prompt token is billed twice.
 * DeepSeek reports its cache hits as prompt_cache_hit_tokens (prompt_tokens = hits + misses) instead.
 */
export function fromOpenAIUsage(u: any): Usage {
  const cached = num(u?.prompt_tokens_details?.cached_tokens ?? u?.prompt_cache_hit_tokens);
  const write = num(u?.prompt_tokens_details?.cache_write_tokens ?? u?.cache_creation_input_tokens);
  const usage: Usage = {
    inputTokens: Math.max(0, num(u?.prompt_tokens) - cached - write),
    outputTokens: u?.completion_tokens ?? 0,
  };
  if (cached) usage.cacheReadTokens = cached;
  if (write) usage.cacheWriteTokens = write;
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
