// The tier that served a Converse answer (serviceTier.type: default | flex | priority | reserved, protocols-2.md §2.3)
// as chat's and Responses' service_tier: the first three are OpenAI's names too; another is passed on as given.
export function chatServiceTier(serviceTier: unknown): string | undefined {
  const type = (serviceTier as { type?: unknown } | null | undefined)?.type;
  return typeof type === "string" && type ? type : undefined;
}
