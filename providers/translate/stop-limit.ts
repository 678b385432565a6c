// OpenAI's chat completions take at most 4 stop sequences (more is OpenAI's 400); Anthropic, Gemini (5) and Bedrock
// have limits of their own. So the limit is the chat upstream's, checked per attempt: a request with more is passed
// over (Unsupported) for that target, another target of the model may take it, and when none can the client gets a
// 400 naming the field it sent (stop, stop_sequences, generationConfig.stopSequences).
import { Unsupported } from "../../core/contracts/translator.ts";
import { invalidRequest } from "../../core/errors.ts";

export const CHAT_MAX_STOP = 4;

/** Throws Unsupported when `stop` (a chat body's) holds more sequences than a chat upstream takes. */
export function checkChatStop(stop: unknown, field: string, provider: string): void {
  if (!Array.isArray(stop) || stop.length <= CHAT_MAX_STOP) return;
  throw new Unsupported(invalidRequest(`${field}: provider ${provider} (chat completions) takes at most ${CHAT_MAX_STOP} stop sequences; got ${stop.length}`, field, { provider }));
}
