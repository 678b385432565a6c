// Anthropic's long-context beta (context-1m-2025-08-07 today): a request carrying it gets Claude Sonnet 4 / 4.5's 1M
// window. Each driver that speaks Messages says from the request it builds whether that request carries it.

const LONG_CONTEXT_BETA = /^context-1m-/;

/** Whether a list of betas (an anthropic-beta header's comma list, or a body's anthropic_beta array) names it. */
export function namesLongContextBeta(betas: unknown): boolean {
  const all = Array.isArray(betas) ? betas.flatMap((b) => String(b).split(",")) : typeof betas === "string" ? betas.split(",") : [];
  return all.some((b) => LONG_CONTEXT_BETA.test(b.trim()));
}

/** Whether outgoing headers (any case, as a configured `headers` map may spell them) carry the long-context beta. */
export function headersOpenLongContext(headers: Record<string, string>): boolean {
  for (const name in headers) if (name.toLowerCase() === "anthropic-beta" && namesLongContextBeta(headers[name])) return true;
  return false;
}
