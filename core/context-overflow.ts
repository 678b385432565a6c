// A context overflow in each client protocol's own words. The gateway's error is 400 INVALID_REQUEST, marked
// details.reason context_length_exceeded by the provider layer (providers/context-overflow.ts recognises each
// provider's wording); what an agent needs to recover (compact, drop history) is the wording its own provider uses:
// - chat and Responses: `code: "context_length_exceeded"`, OpenAI's (Codex and the openai SDK read error.code), the
//   gateway's code kept in details.gateway_code;
// - Messages: a message starting "prompt is too long: N tokens > M maximum", Anthropic's (Claude Code compacts on
//   it and reads N - M as how much to drop, so figures only when N > M: else the phrase alone, which it compacts on
//   too); where the prompt fits and the output asked for does not (the provider names both), Anthropic's "input
//   length and `max_tokens` exceed context limit: N + C > M", on which Claude Code lowers max_tokens and retries;
// - Gemini: Google's INVALID_ARGUMENT with the provider's message, as before (Gemini CLI has no recogniser).

/** details.reason of an upstream's refusal of a prompt longer than the model's context window. */
export const CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";

/**
 * details.reason of an upstream's refusal of a max_tokens the window has no room for beside a prompt that fits
 * (vLLM's "'max_tokens' or 'max_completion_tokens' is too large"): not an overflow to compact for, so the gateway's
 * INVALID_REQUEST to every client but a Messages one, which gets Anthropic's max_tokens wording.
 */
export const MAX_TOKENS_EXCEED_CONTEXT = "max_tokens_exceed_context";

/** The figures an overflow names: the prompt's tokens and the model's window. */
export interface OverflowFigures {
  input_tokens?: number;
  context_window?: number;
}

export const isContextOverflow = (details: Record<string, unknown> | undefined): boolean =>
  details?.reason === CONTEXT_LENGTH_EXCEEDED;

const isMaxTokensOverContext = (details: Record<string, unknown> | undefined): boolean =>
  details?.reason === MAX_TOKENS_EXCEED_CONTEXT;

/** OpenAI's `param` for an overflow: the field that holds the prompt in the client's protocol. */
export const overflowParam = (client: "chat" | "responses"): string => (client === "responses" ? "input" : "messages");

/** Claude Code's own test for an overflow's figures (it compacts on "prompt is too long" alone). */
const ANTHROPIC_WORDING = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i;
/** Claude Code's parse of Anthropic's refusal of input plus max_tokens (VY2 in 2.0.76, Hze in 2.1.328). */
const ANTHROPIC_MAX_TOKENS_WORDING = /input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+)/;

const figure = (n: unknown): number | undefined => (typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined);

/**
 * A Messages client's message for an upstream's refusal of the request's size (an overflow or a max_tokens the window
 * has no room for; any other error's `message` as it is): `message` as it is when it already has Anthropic's wording
 * (Anthropic's own refusal, Claude on Bedrock), else Anthropic's wording first, then the provider's text. The
 * wording: "input length and `max_tokens` exceed context limit: N + C > M" when the provider's figures say the prompt
 * (N) fits the window (M) and the output asked for (C) does not; else "prompt is too long", with "N tokens > M maximum"
 * only when N > M, from the provider's figures (`details`) or else the gateway's (`fallback`: its input estimate and
 * the catalog's window).
 */
export function anthropicOverflowMessage(message: string, details: Record<string, unknown> | undefined, fallback?: OverflowFigures): string {
  const overflow = isContextOverflow(details);
  if (!overflow && !isMaxTokensOverContext(details)) return message;
  if (ANTHROPIC_WORDING.test(message) || ANTHROPIC_MAX_TOKENS_WORDING.test(message)) return message;
  const [named, completion, limit] = [figure(details?.input_tokens), figure(details?.completion_tokens), figure(details?.context_window)];
  if (named !== undefined && completion !== undefined && limit !== undefined && named < limit && named + completion > limit) {
    return `input length and \`max_tokens\` exceed context limit: ${named} + ${completion} > ${limit}, decrease input length or \`max_tokens\` and try again. ${message}`;
  }
  if (!overflow) return message;
  const input = named ?? figure(fallback?.input_tokens);
  const window = limit ?? figure(fallback?.context_window);
  const head = input !== undefined && window !== undefined && input > window ? `prompt is too long: ${input} tokens > ${window} maximum` : "prompt is too long";
  return `${head}. ${message}`;
}
