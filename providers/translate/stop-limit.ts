// OpenAI's chat completions take at most 4 stop sequences (more is OpenAI's 400), and so do the hosts that document
// the same limit (Azure OpenAI, Groq); DeepSeek takes 16, vLLM and SGLang have no limit, Anthropic, Gemini (5) and
// Bedrock have limits of their own. So the limit is the host's (openai-compatible/host-conventions.ts), checked per
// attempt: a request with more is passed over (Unsupported) for that target, another target of the model may take
// it, and when none can the client gets a 400 naming the field it sent (stop, stop_sequences,
// generationConfig.stopSequences). A host with no known limit gets the stops as sent.
import { Unsupported } from "../../core/contracts/translator.ts";
import { invalidRequest } from "../../core/errors.ts";

/** Throws Unsupported when `stop` (a chat body's) holds more than `limit` sequences; no limit, no check. */
export function checkChatStop(stop: unknown, limit: number | undefined, field: string, provider: string): void {
  if (limit === undefined || !Array.isArray(stop) || stop.length <= limit) return;
  throw new Unsupported(invalidRequest(`${field}: provider ${provider} (chat completions) takes at most ${limit} stop sequences; got ${stop.length}`, field, { provider }));
}
