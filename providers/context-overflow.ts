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
import { CONTEXT_LENGTH_EXCEEDED } from "../core/context-overflow.ts";

export interface ContextOverflow {
  /** The prompt's tokens, as the provider counted them, when it says. */
  inputTokens?: number;
  /** The model's window, as the provider states it, when it says. */
  contextWindow?: number;
}

/** One wording: its pattern, and which capture holds the prompt's tokens and which the window (0: not given; -1: chatPromptTokens). */
interface Wording {
  re: RegExp;
  input: number;
  window: number;
}

const WORDINGS: Wording[] = [
  { re: /prompt is too long:?\s*(\d+)\s*tokens?\s*>\s*(\d+)/i, input: 1, window: 2 },
  { re: /prompt is too long/i, input: 0, window: 0 },
  { re: /input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*\d+\s*>\s*(\d+)/i, input: 1, window: 2 },
  { re: /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i, input: 1, window: 2 },
  { re: /input token count exceeds the maximum number of tokens allowed \((\d+)\)/i, input: 0, window: 1 },
  { re: /maximum context length is (\d+) tokens/i, input: -1, window: 1 },
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
 * The prompt's tokens in OpenAI's chat wording, which names them in one of several ways (the messages' share when it
 * gives the completion's too): "your messages resulted in N tokens", "(N in the messages, C in the completion)",
 * "(N in your prompt; C for the completion)", else "you requested T tokens" with no split.
 */
function chatPromptTokens(message: string): number | undefined {
  const m = /messages resulted in (\d+) tokens/i.exec(message) ?? /\((\d+) in (?:the messages|your prompt)/i.exec(message)
    ?? /you requested (\d+) tokens/i.exec(message);
  return number(m?.[1]);
}

/**
 * The overflow `error` (the provider's error object, or its whole body when it has none: Bedrock's `{message}`)
 * and `message` (its text) say, or undefined when they say something else. Only a refusal of the request (400, 413,
 * 422) is one: a 429 about tokens per minute is a rate limit, not the window.
 */
export function contextOverflow(status: number, error: unknown, message: string): ContextOverflow | undefined {
  if (status !== 400 && status !== 413 && status !== 422) return undefined;
  const code = (error as { code?: unknown } | null | undefined)?.code;
  for (const w of WORDINGS) {
    const m = w.re.exec(message);
    if (!m) continue;
    const input = w.input === -1 ? chatPromptTokens(message) : w.input ? number(m[w.input]) : undefined;
    return { inputTokens: input, contextWindow: w.window ? number(m[w.window]) : undefined };
  }
  return code === "context_length_exceeded" ? {} : undefined;
}

/**
 * An overflow's part of the gateway error's details: reason context_length_exceeded and the figures the provider
 * named, which each client protocol's error renders in its own provider's wording (core/context-overflow.ts); {} for
 * any other refusal. The error stays the request's 400, not retried.
 */
export function overflowDetails(status: number, error: unknown, message: string): Record<string, unknown> {
  const overflow = contextOverflow(status, error, message);
  if (!overflow) return {};
  return {
    reason: CONTEXT_LENGTH_EXCEEDED,
    ...(overflow.inputTokens !== undefined ? { input_tokens: overflow.inputTokens } : {}),
    ...(overflow.contextWindow !== undefined ? { context_window: overflow.contextWindow } : {}),
  };
}
