import type { Usage } from "../../core/contracts/provider.ts";

/** OpenAI usage -> canonical. cached_tokens is a subset of prompt_tokens, reasoning_tokens of completion_tokens. */
export function fromOpenAIUsage(u: any): Usage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const usage: Usage = {
    inputTokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached),
    outputTokens: u?.completion_tokens ?? 0,
  };
  if (cached) usage.cacheReadTokens = cached;
  const write = u?.prompt_tokens_details?.cache_write_tokens ?? u?.cache_creation_input_tokens;
  if (write) usage.cacheWriteTokens = write;
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}
