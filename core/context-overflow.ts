// A context overflow in each client protocol's own words. The gateway's error is 400 INVALID_REQUEST, marked
// details.reason context_length_exceeded by the provider layer (providers/context-overflow.ts recognises each
// provider's wording); what an agent needs to recover (compact, drop history) is the wording its own provider uses:
// - chat and Responses: `code: "context_length_exceeded"`, OpenAI's (Codex and the openai SDK read error.code), the
//   gateway's code kept in details.gateway_code;
// - Messages: a message starting "prompt is too long: N tokens > M maximum", Anthropic's (Claude Code compacts on
//   it and reads N - M as how much to drop);
// - Gemini: Google's INVALID_ARGUMENT with the provider's message, as before (Gemini CLI has no recogniser).

/** details.reason of an upstream's refusal of a prompt longer than the model's context window. */
export const CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";

/** The figures an overflow names: the prompt's tokens and the model's window. */
export interface OverflowFigures {
  input_tokens?: number;
  context_window?: number;
}

export const isContextOverflow = (details: Record<string, unknown> | undefined): boolean =>
  details?.reason === CONTEXT_LENGTH_EXCEEDED;

/** OpenAI's `param` for an overflow: the field that holds the prompt in the client's protocol. */
export const overflowParam = (client: "chat" | "responses"): string => (client === "responses" ? "input" : "messages");

/** Claude Code's own test for an overflow's figures (it compacts on "prompt is too long" alone). */
const ANTHROPIC_WORDING = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i;

const figure = (n: unknown): number | undefined => (typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined);

/**
 * A Messages client's message for an overflow: `message` as it is when it already has Anthropic's wording (Anthropic's
 * own refusal, Claude on Bedrock), else Anthropic's wording first, with the provider's figures (`details`) or else
 * the gateway's (`fallback`: its input estimate and the catalog's window), then the provider's text.
 */
export function promptTooLongMessage(message: string, details: Record<string, unknown> | undefined, fallback?: OverflowFigures): string {
  if (ANTHROPIC_WORDING.test(message)) return message;
  const input = figure(details?.input_tokens) ?? figure(fallback?.input_tokens);
  const window = figure(details?.context_window) ?? figure(fallback?.context_window);
  const head = input !== undefined && window !== undefined ? `prompt is too long: ${input} tokens > ${window} maximum` : "prompt is too long";
  return `${head}. ${message}`;
}
