// Whether a provider's error object says its account is out of credit (or over its spending cap) rather than rate
// limited: OpenAI's `insufficient_quota`, sent with a 429 (protocols.md §1.7) and in a Responses stream's `error`
// event or response.failed (protocols-2.md §1.4-1.5). Other providers' documented signals need no reading: Anthropic
// says it with a 402 billing_error, already an endpoint fault by its status; Gemini's and Vertex's 429
// RESOURCE_EXHAUSTED is documented as a rate limit with a retryDelay, so it stays retryable.
const CODE = "insufficient_quota";

/** `error`: the provider's error object (`{type, code, message}`), or an error event's payload that nests it. */
export function isOutOfCredit(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const e = error as { code?: unknown; type?: unknown; error?: unknown };
  if (e.code === CODE || e.type === CODE) return true;
  const inner = e.error as { code?: unknown; type?: unknown } | undefined;
  return !!inner && typeof inner === "object" && (inner.code === CODE || inner.type === CODE);
}
