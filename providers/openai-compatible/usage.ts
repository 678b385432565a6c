import type { Usage } from "../../core/contracts/provider.ts";
import { cacheReadTokensOf, cacheWriteTokensOf } from "../codecs/openai-chat-usage.ts";

/**
 * OpenAI usage -> canonical. cached_tokens and cache_write_tokens (OpenRouter-style) are subsets of prompt_tokens,
 * reasoning_tokens of completion_tokens: input is what is left, so no prompt token is billed twice.
 * DeepSeek reports its cache hits as prompt_cache_hit_tokens (prompt_tokens = hits + misses) instead.
 */
export function fromOpenAIUsage(u: any): Usage {
  const cached = cacheReadTokensOf(u);
  const write = cacheWriteTokensOf(u);
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
