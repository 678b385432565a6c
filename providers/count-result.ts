// The one answer shape every driver's countTokens returns, and the guard that keeps a 0 (or garbage) from ever
// reaching a client: clients stop compacting their context on a zero, so a missing count is an upstream error.
import { GatewayError } from "../core/errors.ts";
import { TOKEN_COUNT_HEADER, type ProviderResult } from "../core/contracts/provider.ts";

export function countResult(provider: string, inputTokens: unknown, source: string, extra: Record<string, unknown> = {}): ProviderResult {
  if (typeof inputTokens !== "number" || !Number.isInteger(inputTokens) || inputTokens <= 0) {
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} returned no token count`, {
      retryable: true,
      details: { provider, upstream_count: inputTokens ?? null },
    });
  }
  return { kind: "json", headers: { [TOKEN_COUNT_HEADER]: source }, body: { ...extra, input_tokens: inputTokens } };
}
