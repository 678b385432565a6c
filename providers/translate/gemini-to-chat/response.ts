// Chat completion -> Gemini GenerateContentResponse: one candidate per choice with its parts in Gemini's order
// (thoughts when asked for, text, whole function calls with their ids), the turn's reasoning in the first
// non-thought part's thoughtSignature (reasoning.ts), finish reasons in Gemini's terms (a tool call ends with STOP,
// as Gemini's do) and usageMetadata; modelVersion is the upstream's model id, as its answer named it (dispatch names
// the gateway's there, core/served-model.ts). A refusal (message.refusal) is a text
// part ending with SAFETY: Gemini has no refusal, and a blocked answer is what it says SAFETY for.
import { randomBytes } from "node:crypto";
import { reasoningText } from "../messages-to-chat/reasoning.ts";
import { signatureFor, type BlobScope, type ReasoningText } from "./reasoning.ts";
import { cacheReadTokensOf } from "../../codecs/openai-chat-usage.ts";

export interface AnswerContext extends BlobScope {
  /** The gateway model id the client called: modelVersion when the upstream's answer names no model. */
  model: string;
  /** thinkingConfig.includeThoughts: thought text goes out as thought parts. */
  thoughts: boolean;
}

/** `refused`: the answer was a refusal, which ends normally (stop) or unsaid on a chat upstream: SAFETY. */
export function finishReasonOf(reason: unknown, refused = false): string {
  if (refused && (reason === "stop" || reason === null || reason === undefined)) return "SAFETY";
  switch (reason) {
    case "stop": case "tool_calls": case "function_call": case null: case undefined: return "STOP";
    case "length": return "MAX_TOKENS";
    case "content_filter": return "SAFETY";
    default: return "OTHER";
  }
}

/** The model an upstream's answer (or chunk) names, when it names one. */
export const namedModel = (model: unknown): string | undefined => (typeof model === "string" && model !== "" ? model : undefined);

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Chat usage -> usageMetadata: thoughts apart from the candidates (Gemini counts them separately), cache reads as cachedContent. */
export function usageMetadataOf(u: any): Record<string, number> {
  const prompt = num(u?.prompt_tokens);
  const completion = num(u?.completion_tokens);
  const thoughts = Math.min(completion, num(u?.completion_tokens_details?.reasoning_tokens));
  const out: Record<string, number> = { promptTokenCount: prompt, candidatesTokenCount: completion - thoughts, totalTokenCount: prompt + completion };
  if (thoughts) out.thoughtsTokenCount = thoughts;
  const cached = cacheReadTokensOf(u);
  if (cached) out.cachedContentTokenCount = cached;
  return out;
}

/** Tool-call arguments (a JSON string, maybe invalid) as Gemini's args object. */
export function argsOf(s: unknown): Record<string, unknown> {
  try {
    const v = JSON.parse(typeof s === "string" && s ? s : "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { rawInvalidInput: s };
  }
}

export function functionCallPart(id: unknown, name: unknown, args: unknown): Record<string, unknown> {
  return { functionCall: { ...(typeof id === "string" && id ? { id } : {}), name, args: argsOf(args) } };
}

/** Puts the pending reasoning on the first non-thought part (or on an empty text part when there is none). */
export function attachReasoning(parts: Record<string, unknown>[], details: unknown[], scope: BlobScope, text?: ReasoningText): void {
  const thoughtSignature = signatureFor(details, scope, text);
  if (!thoughtSignature) return;
  const carrier = parts.find((p) => p.thought !== true);
  if (carrier) carrier.thoughtSignature = thoughtSignature;
  else parts.push({ text: "", thoughtSignature });
}

/** message.refusal / delta.refusal: the refusal text, "" when there is none. */
export const refusalText = (m: any): string => (typeof m?.refusal === "string" ? m.refusal : "");

export const responseIdOf = (chatId: unknown): string =>
  typeof chatId === "string" && chatId ? chatId.replace(/^chatcmpl-/, "") : randomBytes(12).toString("hex");

export function chatToGeminiResponse(chat: any, ctx: AnswerContext): Record<string, unknown> {
  const choices: any[] = Array.isArray(chat?.choices) ? chat.choices : [];
  const candidates = choices.map((c, i) => {
    const m = c.message ?? {};
    const parts: Record<string, unknown>[] = [];
    const thought = reasoningText(m);
    if (ctx.thoughts && thought.text) parts.push({ text: thought.text, thought: true });
    if (typeof m.content === "string" && m.content) parts.push({ text: m.content });
    const refusal = refusalText(m);
    if (refusal) parts.push({ text: refusal });
    for (const tc of Array.isArray(m.tool_calls) ? m.tool_calls : []) parts.push(functionCallPart(tc.id, tc.function?.name, tc.function?.arguments));
    attachReasoning(parts, Array.isArray(m.reasoning_details) ? m.reasoning_details : [], ctx, thought);
    return { content: { role: "model", ...(parts.length ? { parts } : {}) }, finishReason: finishReasonOf(c.finish_reason, refusal !== ""), index: typeof c.index === "number" ? c.index : i };
  });
  return { candidates, usageMetadata: usageMetadataOf(chat?.usage), modelVersion: namedModel(chat?.model) ?? ctx.model, responseId: responseIdOf(chat?.id) };
}
