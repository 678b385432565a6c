// The top-level keys Claude's Messages body may hold on the clouds (Bedrock InvokeModel, Vertex rawPredict): both
// refuse any other with Claude's validation error, "<key>: Extra inputs are not permitted" (reference protocols-2
// §5.1). Anthropic's first-party-only fields (metadata, service_tier, container, mcp_servers, inference_geo) and
// message threads (`thread`) are not among them.
const COMMON = ["anthropic_version", "max_tokens", "messages", "system", "temperature", "top_p", "top_k", "stop_sequences", "tools", "tool_choice", "thinking", "output_config", "output_format", "context_management"];

/** Bedrock reads betas from the body (`anthropic_beta`); the path chooses streaming. */
export const INVOKE_MODEL_KEYS = new Set([...COMMON, "anthropic_beta"]);
/** Vertex reads betas from the header; streamRawPredict wants `stream: true` in the body. */
export const VERTEX_CLAUDE_KEYS = new Set([...COMMON, "stream"]);

/** Claude's refusal of the first key `known` does not hold, or undefined. */
export function extraKeyError(body: Record<string, unknown>, known: Set<string>): string | undefined {
  const extra = Object.keys(body).find((k) => !known.has(k));
  return extra === undefined ? undefined : `${extra}: Extra inputs are not permitted`;
}
