// Whether an upstream's refusal says the prompt does not fit the model's context window, in any provider's words,
// and the figures it names. Agents recover from an overflow (compact, drop history) only when they recognise it, and
// each recognises one provider's wording: the gateway renders a recognised one in the client protocol's own
// (core/context-overflow.ts). The wordings, as the providers send them:
// - OpenAI, Azure OpenAI, Groq and other OpenAI-compatible APIs: `code: "context_length_exceeded"`; chat's message
//   "This model's maximum context length is M tokens. However, your messages resulted in N tokens...", Responses'
//   "Your input exceeds the context window of this model...", Groq's bare "Please reduce the length of the messages
//   or completion."; DeepSeek and vLLM: the same wording with code invalid_request_error, "However, you requested T
//   tokens (N in the messages, C in the completion)"; xAI: "This model's maximum prompt length is M but the request
//   contains N tokens."
// - Anthropic (and Claude on Bedrock, "The model returned the following errors: " before it): "prompt is too long:
//   N tokens > M maximum"; its older "input length and `max_tokens` exceed context limit: N + C > M".
// - Gemini and Vertex: 400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens allowed
//   (M)." (sometimes without "(N)").
// - Bedrock: ValidationException "Input is too long for requested model."; Titan's "Too many input tokens. Max input
//   tokens: M, request input token count: N".
// - Mistral: "Prompt contains N tokens and 0 draft tokens, too large for model with M maximum context length".
// Not an overflow: vLLM's "'max_tokens' or 'max_completion_tokens' is too large: C. This model's maximum context length
// is M tokens and your request has N input tokens" says the prompt fits and the output asked for does not (its own
// reason, which a Messages client reads in Anthropic's max_tokens wording and no agent compacts for).
import { CONTEXT_LENGTH_EXCEEDED, MAX_TOKENS_EXCEED_CONTEXT } from "../core/context-overflow.ts";

export interface ContextOverflow {
  /** The prompt's tokens, as the provider counted them, when it says. */
  inputTokens?: number;
  /** The output the request asked for, when the provider names it beside the prompt's share. */
  completionTokens?: number;
  /** The model's window, as the provider states it, when it says. */
  contextWindow?: number;
}

/**
 * One wording: its pattern, and which capture holds the prompt's tokens, the output asked for and the window (0 or
 * absent: not given; -1: chatFigures).
 */
interface Wording {
  re: RegExp;
  input: number;
  window: number;
  completion?: number;
}

const WORDINGS: Wording[] = [
  { re: /prompt is too long:?\s*(\d+)\s*tokens?\s*>\s*(\d+)/i, input: 1, window: 2 },
  { re: /prompt is too long/i, input: 0, window: 0 },
  { re: /input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)/i, input: 1, completion: 2, window: 3 },
  { re: /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i, input: 1, window: 2 },
  { re: /input token count exceeds the maximum number of tokens allowed \((\d+)\)/i, input: 0, window: 1 },
  { re: /maximum context length is (\d+) tokens/i, input: -1, completion: -1, window: 1 },
  { re: /maximum prompt length is (\d+) but the request contains (\d+) tokens/i, input: 2, window: 1 },
  { re: /prompt contains (\d+) tokens.*?too large for model with (\d+) maximum context length/is, input: 1, window: 2 },
  { re: /too many input tokens\.?\s*max input tokens:\s*(\d+),\s*request input token count:\s*(\d+)/i, input: 2, window: 1 },
  { re: /too many input tokens/i, input: 0, window: 0 },
  { re: /input is too long for requested model/i, input: 0, window: 0 },
  { re: /exceeds the context window/i, input: 0, window: 0 },
];

const number = (s: string | undefined): number | undefined => {
  const n = s === undefined ? NaN : Number(s);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/**
 * The prompt's tokens and the output asked for in OpenAI's chat wording, which names them in one of several ways:
 * "your messages resulted in N tokens", vLLM's "your request has N input tokens", "(N in the messages, C in the
 * completion)" and "(N in your prompt; C for the completion)" (the prompt may then fit, and the output not), else
 * "you requested T tokens" with no split.
 */
function chatFigures(message: string): { input?: number; completion?: number } {
  const split = /\((\d+) in (?:the messages|your prompt)[,;]\s*(\d+) (?:in|for) the completion\)/i.exec(message);
  if (split) return { input: number(split[1]), completion: number(split[2]) };
  const m = /messages resulted in (\d+) tokens/i.exec(message) ?? /request has (\d+) input tokens/i.exec(message)
    ?? /\((\d+) in (?:the messages|your prompt)/i.exec(message) ?? /you requested (\d+) tokens/i.exec(message);
  return { input: number(m?.[1]) };
}

/** vLLM's refusal of a max_tokens (C) the window (M) has no room for beside the prompt (N), which fits. */
const MAX_TOKENS_TOO_LARGE = /max_(?:completion_)?tokens'? (?:or '?max_completion_tokens'? )?is too large:\s*(\d+)\.?\s*This model's maximum context length is (\d+) tokens and your request has (\d+) input tokens/i;

/**
 * The overflow `error` (the provider's error object, or its whole body when it has none: Bedrock's `{message}`)
 * and `message` (its text) say, or undefined when they say something else. Only a refusal of the request (400, 413,
 * 422) is one: a 429 about tokens per minute is a rate limit, not the window.
 */
export function contextOverflow(status: number, error: unknown, message: string): ContextOverflow | undefined {
  if (status !== 400 && status !== 413 && status !== 422) return undefined;
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (MAX_TOKENS_TOO_LARGE.test(message)) return undefined;
  for (const w of WORDINGS) {
    const m = w.re.exec(message);
    if (!m) continue;
    const chat = w.input === -1 ? chatFigures(message) : undefined;
    const at = (i: number | undefined) => (i ? number(m[i]) : undefined);
    const overflow: ContextOverflow = { inputTokens: chat ? chat.input : at(w.input), contextWindow: at(w.window) };
    const completion = chat ? chat.completion : at(w.completion);
    return completion === undefined ? overflow : { ...overflow, completionTokens: completion };
  }
  return code === "context_length_exceeded" ? {} : undefined;
}

/** The figures as details' fields, those the provider named. */
const figures = (o: ContextOverflow): Record<string, number> => ({
  ...(o.inputTokens !== undefined ? { input_tokens: o.inputTokens } : {}),
  ...(o.completionTokens !== undefined ? { completion_tokens: o.completionTokens } : {}),
  ...(o.contextWindow !== undefined ? { context_window: o.contextWindow } : {}),
});

/**
 * An overflow's part of the gateway error's details: reason context_length_exceeded and the figures the provider
 * named, which each client protocol's error renders in its own provider's wording (core/context-overflow.ts);
 * vLLM's max_tokens refusal is reason max_tokens_exceed_context with its figures (a plain 400 to all but Messages
 * clients); {} for any other refusal. The error stays the request's 400, not retried.
 */
export function overflowDetails(status: number, error: unknown, message: string): Record<string, unknown> {
  const tooLarge = status === 400 || status === 422 ? MAX_TOKENS_TOO_LARGE.exec(message) : null;
  if (tooLarge) {
    const [completion, window, input] = tooLarge.slice(1).map(number);
    return { reason: MAX_TOKENS_EXCEED_CONTEXT, ...figures({ inputTokens: input, completionTokens: completion, contextWindow: window }) };
  }
  const overflow = contextOverflow(status, error, message);
  return overflow ? { reason: CONTEXT_LENGTH_EXCEEDED, ...figures(overflow) } : {};
}
