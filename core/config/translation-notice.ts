// Protocol translation is applied in one place, the stream-transcoder plugin (issue 12). A pipeline without it
// serves every language model in its upstream's protocol only: chat requests to Anthropic, messages requests to
// OpenAI-protocol upstreams, every chat or messages request to Gemini and every Gemini API request (whose native pair
// reads the usage too) fail. Say so when the config is loaded (`model-gateway check`, start, reload) rather than at
// the first translated request. A notice, not a problem: a gateway whose clients all speak their models' own protocol
// is a valid choice.
import type { GatewayConfig } from "../generated/types/gateway.ts";

export const TRANSLATOR_PLUGIN = "stream-transcoder";

export function untranslatedNotice(config: GatewayConfig, pipeline: readonly string[]): string | undefined {
  if (pipeline.includes(TRANSLATOR_PLUGIN)) return undefined;
  const models = Object.entries(config.models ?? {}).filter(([, m]) => (m.type ?? "language") === "language").map(([id]) => id);
  if (!models.length) return undefined;
  const shown = models.slice(0, 5).join(", ") + (models.length > 5 ? ` and ${models.length - 5} more` : "");
  return `pipeline has no ${TRANSLATOR_PLUGIN}: requests are not translated between protocols, so chat requests to `
    + `Anthropic models, messages requests to OpenAI-protocol models, all chat and messages requests to Gemini `
    + `models and every Gemini API (/v1beta) request fail (language models: ${shown})`;
}
