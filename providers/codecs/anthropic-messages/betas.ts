// Which betas a call to a Messages host carries: the client's anthropic-beta added to those the operator configured
// (providers.<name>.headers), not put in their place, so an operator who turns a beta on for everyone (the 1M context,
// say) keeps it for a client that sends betas of its own.

/**
 * The anthropic-beta header to spread after the configured headers: under the configured name's own spelling (so it
 * replaces that entry), every beta named once. Empty when the client sent none (the configured header goes as it is).
 */
export function mergedBetaHeader(configured: Record<string, string> | undefined, client: string | string[] | undefined): Record<string, string> {
  const clientBetas = Array.isArray(client) ? client.join(",") : client;
  if (!clientBetas) return {};
  const name = Object.keys(configured ?? {}).find((k) => k.toLowerCase() === "anthropic-beta");
  const names = [name ? configured![name] : "", clientBetas].flatMap((v) => v.split(",")).map((b) => b.trim()).filter(Boolean);
  return { [name ?? "anthropic-beta"]: [...new Set(names)].join(",") };
}
