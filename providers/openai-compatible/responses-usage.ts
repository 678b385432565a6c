import type { Usage } from "../../core/contracts/provider.ts";

/**
 * Responses API usage -> canonical. Same semantics as chat's under other names: cached_tokens and cache_write_tokens
 * are subsets of input_tokens, reasoning_tokens of output_tokens (so input is billed uncached + cache read + cache
 * write, never twice).
 */
export function fromResponsesUsage(u: any, output?: unknown): Usage {
  const cached = num(u?.input_tokens_details?.cached_tokens);
  const write = num(u?.input_tokens_details?.cache_write_tokens);
  const usage: Usage = {
    inputTokens: Math.max(0, num(u?.input_tokens) - cached - write),
    outputTokens: u?.output_tokens ?? 0,
  };
  if (cached) usage.cacheReadTokens = cached;
  if (write) usage.cacheWriteTokens = write;
  const reasoning = u?.output_tokens_details?.reasoning_tokens;
  if (reasoning) usage.reasoningTokens = reasoning;
  const searches = webSearchCalls(output);
  if (searches) usage.webSearches = searches;
  return usage;
}

/** Web search calls in a response's output (OpenAI bills each web_search_call; its content tokens are in input). */
export function webSearchCalls(output: unknown): number {
  if (!Array.isArray(output)) return 0;
  let n = 0;
  for (const item of output) if (item?.type === "web_search_call") n++;
  return n;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
