// Cache figures in an OpenAI-style chat usage object, however the host reports them: what the driver bills
// (openai-compatible/usage.ts) and what each translated client is shown (Anthropic, Responses and Gemini usage) read
// them here, so the bill and the usage a client sees cannot disagree.

/** Prompt tokens read from the cache: OpenAI's prompt_tokens_details.cached_tokens, else DeepSeek's prompt_cache_hit_tokens. */
export function cacheReadTokensOf(u: any): number {
  return num(u?.prompt_tokens_details?.cached_tokens ?? u?.prompt_cache_hit_tokens);
}

/** Prompt tokens written to the cache: OpenRouter's cache_write_tokens, or an Anthropic-style field beside. */
export function cacheWriteTokensOf(u: any): number {
  return num(u?.prompt_tokens_details?.cache_write_tokens ?? u?.cache_creation_input_tokens);
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
