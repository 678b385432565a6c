// Claude's betas on Bedrock: it reads none from an anthropic-beta header, only from the body — InvokeModel's
// `anthropic_beta` (invoke.ts), Converse's `additionalModelRequestFields.anthropic_beta` (reference protocols-2 §2.2)
// — and only those it accepts (one unknown beta fails the whole request). The provider's configured anthropic-beta
// (providers.<name>.headers) is moved there, for every call to Claude.
import { isConverseClaude } from "../../core/metering/output-limit.ts";

/** Betas Bedrock accepts (Envoy's live-probed list, reference §5.1); others are dropped and reported. */
const BETAS = new Set([
  "computer-use-2024-10-22", "computer-use-2025-01-24", "context-1m-2025-08-07", "context-management-2025-06-27",
  "fine-grained-tool-streaming-2025-05-14", "interleaved-thinking-2025-05-14", "mcp-client-2025-04-04", "mcp-client-2025-11-20",
  "model-context-window-exceeded-2025-08-26", "output-128k-2025-02-19", "pdfs-2024-09-25", "search-results-2025-06-09",
  "token-counting-2024-11-01", "token-efficient-tools-2025-02-19", "tool-search-tool-2025-10-19", "web-search-2025-03-05",
]);
const BETA_ALIAS: Record<string, string> = { "advanced-tool-use-2025-11-20": "tool-search-tool-2025-10-19" };

export const betaList = (v: string | undefined) => (v ?? "").split(",").map((b) => b.trim()).filter(Boolean);
/** The betas of a list Bedrock accepts, aliases mapped. */
export const accepted = (betas: string[]) => betas.map((b) => BETA_ALIAS[b] ?? b).filter((b) => BETAS.has(b));

/** The provider's configured anthropic-beta (any spelling of the name), a comma list. */
export function configuredBetas(configured: Record<string, string> | undefined): string[] {
  const name = Object.keys(configured ?? {}).find((k) => k.toLowerCase() === "anthropic-beta");
  return name ? betaList(configured![name]) : [];
}

/** The configured headers as sent to Bedrock: without anthropic-beta, whose betas travel in the body. */
export function withoutBetaHeader(configured: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in configured) if (k.toLowerCase() !== "anthropic-beta") out[k] = configured[k]!;
  return out;
}

/**
 * The `additionalModelRequestFields.anthropic_beta` a Converse call to Claude carries: the body's own (a translated
 * body has none today) with the configured ones added, each once, only those Bedrock accepts. Undefined: none, or a
 * model that is not Claude (another family refuses Claude's field).
 */
export function converseBetas(body: Record<string, any>, upstreamModel: string, configured: Record<string, string> | undefined): string[] | undefined {
  if (!isConverseClaude(upstreamModel)) return undefined;
  const own = body.additionalModelRequestFields?.anthropic_beta;
  const list = [...new Set(accepted([...(Array.isArray(own) ? own.map(String) : []), ...configuredBetas(configured)]))];
  return list.length ? list : undefined;
}

/** The Converse body as sent: its betas (converseBetas) in additionalModelRequestFields, beside thinking and the rest. */
export function withConverseBetas(body: Record<string, any>, upstreamModel: string, configured: Record<string, string> | undefined): Record<string, any> {
  const anthropic_beta = converseBetas(body, upstreamModel, configured);
  return anthropic_beta ? { ...body, additionalModelRequestFields: { ...body.additionalModelRequestFields, anthropic_beta } } : body;
}
