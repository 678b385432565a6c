// The tier that served a Claude answer (Anthropic's usage.service_tier), as chat's and Responses' service_tier names
// it: Anthropic's "standard" is OpenAI's "default" (codecs/anthropic-messages/usage.ts maps it back for Messages
// clients), "priority" is both's; another ("batch", or one added later) is passed on as Anthropic gives it.
export function chatServiceTier(anthropicTier: unknown): string | undefined {
  if (typeof anthropicTier !== "string" || !anthropicTier) return undefined;
  return anthropicTier === "standard" ? "default" : anthropicTier;
}
