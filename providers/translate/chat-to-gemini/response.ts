// Gemini GenerateContentResponse -> chat completion (reference §4.3): thought parts -> reasoning_content, function
// calls -> tool_calls with synthesized ids, STOP with a function call -> tool_calls (Gemini never says so itself),
// grounding and citation sources -> message.annotations (grounding.ts).
import { randomBytes } from "node:crypto";
import type { Usage } from "../../../core/contracts/provider.ts";
import { citesSources, GeminiSources } from "./grounding.ts";
import { Utf16Index } from "./utf16-index.ts";
import { geminiAudioTokens } from "../../codecs/gemini/audio-tokens.ts";

const FILTERED = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"]);

export function finishReasonOf(reason: string | undefined, sawToolCall: boolean): string {
  if (sawToolCall && (reason === "STOP" || reason === undefined)) return "tool_calls";
  if (reason === "MAX_TOKENS") return "length";
  if (reason && FILTERED.has(reason)) return "content_filter";
  return "stop";
}

/**
 * Gemini's function calls have no id (we make one) and may carry a thoughtSignature that must be replayed with the
 * call (Gemini 3 rejects calls without it). The signature rides inside the tool-call id, base64url-encoded after
 * SIG_MARK, so it survives any client's round trip; the request translator takes it back out.
 */
const SIG_MARK = "__sig__";

export function toolCallId(part?: { functionCall?: { id?: string }; thoughtSignature?: string }): string {
  const id = part?.functionCall?.id ?? `call_${randomBytes(12).toString("hex")}`;
  const sig = part?.thoughtSignature;
  // Character mapping rather than decode/encode, so the bytes of the signature come back exactly as sent.
  return sig ? `${id}${SIG_MARK}${sig.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}` : id;
}

/** The thought signature carried by a tool-call id made by toolCallId, if any. */
export function signatureOf(id: string): string | undefined {
  const at = id.indexOf(SIG_MARK);
  if (at === -1) return undefined;
  const b64 = id.slice(at + SIG_MARK.length).replace(/-/g, "+").replace(/_/g, "/");
  return b64 + "=".repeat((4 - (b64.length % 4)) % 4);
}

/**
 * The id without the signature toolCallId appended; any other id unchanged. Only Gemini wants the signature back;
 * elsewhere it only lengthens the id past other upstreams' limits (OpenAI: 40 characters), as when a tool loop moves
 * off a Gemini model (Claude Code's /model, a fallback).
 */
export function unsignedToolId(id: unknown): unknown {
  if (typeof id !== "string") return id;
  const at = id.indexOf(SIG_MARK);
  return at > 0 ? id.slice(0, at) : id;
}

/** Whether an id carries a Gemini signature (toolCallId's suffix). */
export const signedToolId = (id: unknown): id is string => typeof id === "string" && id.indexOf(SIG_MARK) > 0;

export function geminiToOpenAIUsage(m: any): Record<string, unknown> {
  const prompt = num(m?.promptTokenCount) + num(m?.toolUsePromptTokenCount);
  const thoughts = num(m?.thoughtsTokenCount);
  const completion = num(m?.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: num(m?.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/**
 * usageMetadata -> canonical. promptTokenCount includes the cached tokens; toolUsePromptTokenCount (what built-in tools
 * such as googleSearch or urlContext fed back to the model) is apart from it and billed as input.
 */
export function fromGeminiUsage(m: any): Usage {
  const cached = num(m?.cachedContentTokenCount);
  const thoughts = num(m?.thoughtsTokenCount);
  const input = Math.max(0, num(m?.promptTokenCount) - cached) + num(m?.toolUsePromptTokenCount);
  const u: Usage = { inputTokens: input, outputTokens: num(m?.candidatesTokenCount) + thoughts };
  if (cached) u.cacheReadTokens = cached;
  if (thoughts) u.reasoningTokens = thoughts;
  const audio = geminiAudioTokens(m); // billed at the audio price where the model has one
  if (audio.input) u.audioInputTokens = audio.input;
  if (audio.cached) u.cacheReadAudioTokens = audio.cached;
  return u;
}

/**
 * oneCall (the client sent parallel_tool_calls: false): Gemini has no such setting and may call several functions at
 * once, so each choice keeps only its first call — the one that carries the turn's thought signature.
 */
export function geminiToChatResponse(g: any, model: string, opts: { created?: number; oneCall?: boolean } = {}): Record<string, unknown> {
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const candidates: any[] = Array.isArray(g?.candidates) ? g.candidates : [];
  const choices = candidates.map((c, i) => {
    let text = "";
    let reasoning = "";
    const toolCalls: unknown[] = [];
    for (const p of c.content?.parts ?? []) {
      if (p.functionCall) {
        if (!opts.oneCall || !toolCalls.length) toolCalls.push({ id: toolCallId(p), type: "function", function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } });
      } else if (typeof p.text === "string") {
        if (p.thought === true) reasoning += p.text;
        else text += p.text;
      }
    }
    const message: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length ? null : ""), refusal: null };
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning_content = reasoning;
    const annotations = citesSources(c) ? answerSources(c, text) : [];
    if (annotations.length) message.annotations = annotations;
    return { index: c.index ?? i, message, logprobs: null, finish_reason: finishReasonOf(c.finishReason, toolCalls.length > 0) };
  });
  // A blocked prompt has no candidates at all.
  if (!choices.length) choices.push({ index: 0, message: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: g?.promptFeedback?.blockReason ? "content_filter" : "stop" });
  return {
    id: `chatcmpl-${g?.responseId ?? randomBytes(12).toString("hex")}`,
    object: "chat.completion",
    created,
    model: g?.modelVersion ?? model,
    choices,
    usage: geminiToOpenAIUsage(g?.usageMetadata),
  };
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** A JSON answer's sources over its text (as a stream's, grounding.ts). */
function answerSources(c: any, text: string) {
  const sources = new GeminiSources();
  sources.add(c);
  const index = new Utf16Index();
  index.append(text);
  return sources.annotations(index);
}
