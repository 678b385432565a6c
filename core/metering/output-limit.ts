// How much output a request asks an upstream for: one function for the translators and drivers that write the
// limit into the upstream's body, and for the policies that reserve against it (budget, rate-limit, the meter's cap
// on an estimate). They once read different aliases (max_tokens first here, max_completion_tokens first there), so a
// request could reserve one token while the upstream was asked for 60 000; sharing this code keeps them equal.
import type { Target, UpstreamProtocol } from "../contracts/provider.ts";
import { chatThinkingTokens, dollarsToTokens, effortToTokens, geminiThinkingEffort, geminiThinkingOff, knobsFor, messagesThinkingEffort, MIN_THINKING_TOKENS } from "./thinking.ts";

/** The client protocols (the public endpoints that reach a language model). */
export type AskingProtocol = "chat" | "messages" | "responses" | "gemini";

/** What the limit depends on: an endpoint (catalog entry) or a routed target. */
export type LimitTarget = Pick<Target, "provider" | "upstreamModel" | "pricing" | "maxTokens" | "reasoning">;

/** A Messages upstream needs max_tokens: without one from the client and the catalog, this (LiteLLM's default). */
export const DEFAULT_MESSAGES_MAX_TOKENS = 4096;

export interface OutputAsk {
  /** The value of the upstream's limit field (max_tokens, maxOutputTokens, inferenceConfig.maxTokens…); undefined: not sent. */
  limit?: number;
  /** An extended-thinking budget sent with it (Anthropic budget_tokens, Gemini thinkingBudget; 0 = thinking off). */
  thinking?: number;
  /** The most output tokens one choice can bill; undefined when the upstream decides (the model's maximum). */
  perChoice?: number;
  /** Choices the upstream generates (chat's n, Gemini's candidateCount). */
  choices: number;
}

const ALIASES = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;

function tokens(v: unknown): number | undefined {
  // Unknown aliases are not validated: a numeric string counts too (some OpenAI-compatible hosts coerce it).
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : undefined;
}

/**
 * The output limit a body states, under any protocol's name (max_tokens, max_completion_tokens, max_output_tokens,
 * generationConfig.maxOutputTokens): the largest, so no reader of any alias can find a larger one.
 */
export function statedOutputLimit(body: any): number | undefined {
  let max: number | undefined;
  for (const k of ALIASES) {
    const n = tokens(body?.[k]);
    if (n !== undefined && (max === undefined || n > max)) max = n;
  }
  const g = tokens(body?.generationConfig?.maxOutputTokens);
  if (g !== undefined && (max === undefined || g > max)) max = g;
  return max;
}

/**
 * The limit a translated request sends: the client's, at most the endpoint's catalog maximum. A client sets its limit
 * for the model it knows (Claude Code sends max_tokens 32000 or 64000, the Anthropic SDK needs one), and a model of
 * another protocol refuses more than it can write (OpenAI: "max_tokens is too large"), so every such call would fail.
 */
export function translatedOutputLimit(body: any, target: Pick<LimitTarget, "maxTokens">): number | undefined {
  const stated = statedOutputLimit(body);
  const max = target.maxTokens;
  return stated !== undefined && max !== undefined && max > 0 && stated > max ? max : stated;
}

/**
 * `body` (a client's, about to be translated) with every limit field above `max` lowered to it, and those fields as
 * the client spelled them (named in x-mg-dropped-params); the body itself when none is.
 */
export function withinOutputMaximum(body: any, max: number | undefined): { body: any; lowered: string[] } {
  const lowered: string[] = [];
  if (max === undefined || !(max > 0) || body === null || typeof body !== "object") return { body, lowered };
  let out = body;
  for (const k of ALIASES) {
    const n = tokens(body[k]);
    if (n === undefined || n <= max) continue;
    if (out === body) out = { ...body };
    out[k] = max;
    lowered.push(k);
  }
  const gc = body.generationConfig;
  const g = tokens(gc?.maxOutputTokens);
  if (g !== undefined && g > max) {
    if (out === body) out = { ...body };
    out.generationConfig = { ...gc, maxOutputTokens: max };
    lowered.push("generationConfig.maxOutputTokens");
  }
  return { body: out, lowered };
}

/** Choices a body asks for (chat's n, Gemini's generationConfig.candidateCount); 1 for anything else. */
export function requestedChoices(body: any): number {
  const n = body?.n ?? body?.generationConfig?.candidateCount;
  return typeof n === "number" && Number.isFinite(n) && n > 1 ? Math.ceil(n) : 1;
}

/** Bedrock Converse model ids naming Claude: the only Converse family with a thinking field. */
export const isConverseClaude = (id: string) => /(^|[./])anthropic\.claude/.test(id);

/** The reasoning fields a translated request carries into chat (the inner translators read those). */
function chatView(body: any, client: AskingProtocol, target: LimitTarget): any {
  if (client === "chat") return body;
  // gemini -> chat turns thinkingConfig into reasoning_effort (rounded up to an effort) on a model that can think.
  if (client === "gemini") return { providerOptions: body?.providerOptions, reasoning_effort: target.reasoning ? geminiThinkingEffort(body?.generationConfig?.thinkingConfig) : undefined };
  // messages -> chat turns `thinking` into reasoning_effort (a budget rounded up to an effort) on a model that can think,
  // and thinking disabled into none (which Gemini 2.5 Pro takes as its least budget).
  if (client === "messages") return { providerOptions: body?.providerOptions, reasoning_effort: target.reasoning ? (body?.thinking?.type === "disabled" ? "none" : messagesThinkingEffort(body)) : undefined };
  // responses -> chat maps reasoning.effort to reasoning_effort; both keep providerOptions.
  return { providerOptions: body?.providerOptions, reasoning_effort: body?.reasoning?.effort };
}

/** Thinking tokens for Anthropic's `thinking` (at least its minimum), or undefined when none is asked for. */
function anthropicThinking(body: any, client: AskingProtocol, native: boolean, target: LimitTarget): number | undefined {
  // A native Messages body with its own `thinking` keeps it (Anthropic requires budget_tokens < max_tokens); without
  // one, a dollar budget in providerOptions becomes one. A translated body: dollars, then effort.
  const t = native
    ? body?.thinking === undefined ? dollarsToTokens(knobsFor(body, target.provider)?.thinkingBudget, target) : undefined
    : chatThinkingTokens(chatView(body, client, target), target);
  return t === undefined ? undefined : Math.max(MIN_THINKING_TOKENS, t);
}

/**
 * Gemini's thinkingConfig.thinkingBudget: "none" turns it off (0; the least budget on a model that always thinks, 2.5
 * Pro); then dollars, then effort.
 */
export function geminiThinking(body: any, client: AskingProtocol, target: LimitTarget): number | undefined {
  const view = chatView(body, client, target);
  const knobs = knobsFor(view, target.provider);
  const effort = knobs?.reasoningEffort ?? view?.reasoning_effort;
  if (effort === "none") return geminiThinkingOff(target.upstreamModel);
  return dollarsToTokens(knobs?.thinkingBudget, target) ?? effortToTokens(effort);
}

/**
 * What `body` (sent on the `client` endpoint) asks a `protocol` upstream for on this target: the limit field as the
 * translator or driver writes it, the thinking budget beside it, and what one choice can bill at most.
 */
export function outputAsk(body: any, client: AskingProtocol, protocol: UpstreamProtocol, target: LimitTarget): OutputAsk {
  // Passed through as sent; translated, at most the endpoint's maximum (what stream-transcoder sends on).
  const stated = client === protocol ? statedOutputLimit(body) : translatedOutputLimit(body, target);
  switch (protocol) {
    case "messages": {
      // Always sent: the client's limit, else the model's maximum. Thinking must fit below it (budget_tokens <
      // max_tokens). A translated client's limit holds its reasoning (OpenAI's max_completion_tokens and
      // max_output_tokens; Gemini's maxOutputTokens in practice): the budget is cut to fit under it, and thinking is
      // off (undefined) when Anthropic's minimum does not fit. Without a limit from the client it is added on.
      // max_tokens 0 from a Messages client is Anthropic's cache pre-warm: sent as is, nothing generated or reserved.
      if (client === "messages" && body?.max_tokens === 0) return { limit: 0, perChoice: 0, choices: 1 };
      const thinking = anthropicThinking(body, client, client === "messages", target);
      if (client !== "messages" && stated !== undefined && thinking !== undefined) {
        const fits = Math.min(thinking, stated - 1);
        return { limit: stated, thinking: fits >= MIN_THINKING_TOKENS ? fits : undefined, perChoice: stated, choices: 1 };
      }
      let limit = stated ?? target.maxTokens ?? DEFAULT_MESSAGES_MAX_TOKENS;
      if (thinking !== undefined && limit <= thinking) limit += thinking;
      return { limit, thinking, perChoice: limit, choices: 1 }; // n > 1 is refused by chat -> messages
    }
    case "converse": {
      let limit = stated;
      const claude = isConverseClaude(target.upstreamModel);
      const t = claude ? chatThinkingTokens(chatView(body, client, target), target) : undefined;
      const thinking = t === undefined ? undefined : Math.max(MIN_THINKING_TOKENS, t);
      // Every client's limit holds its reasoning here (no client speaks Converse): as on Messages, the budget is cut
      // to fit under it, and thinking is off when Anthropic's minimum does not fit.
      if (thinking !== undefined && limit !== undefined) {
        const fits = Math.min(thinking, limit - 1);
        return { limit, thinking: fits >= MIN_THINKING_TOKENS ? fits : undefined, perChoice: limit, choices: 1 };
      }
      // Without a client limit, room for the answer is added above the budget.
      if (thinking !== undefined) limit = thinking + (target.maxTokens && target.maxTokens > thinking ? Math.min(4096, target.maxTokens - thinking) : 4096);
      return { limit, thinking, perChoice: limit, choices: 1 }; // Converse has no n: it is dropped
    }
    case "gemini": {
      const choices = client === "chat" || client === "gemini" ? requestedChoices(body) : 1;
      if (client === "gemini") {
        // A Gemini body passes through with its own thinkingConfig: a fixed budget counts as sent; a dynamic one
        // (-1, a level, includeThoughts alone) is the model's to choose, so the model's maximum.
        const tc = body?.generationConfig?.thinkingConfig;
        const fixed = typeof tc?.thinkingBudget === "number" && tc.thinkingBudget >= 0 ? tc.thinkingBudget : undefined;
        const dynamic = fixed === undefined && geminiThinkingEffort(tc) !== undefined;
        return { limit: stated, thinking: fixed, perChoice: stated === undefined || dynamic ? undefined : stated + (fixed ?? 0), choices };
      }
      const thinking = geminiThinking(body, client, target);
      // Gemini documents the thinking budget as apart from maxOutputTokens (and bills it as output): both count.
      return { limit: stated, thinking, perChoice: stated === undefined ? undefined : stated + (thinking ?? 0), choices };
    }
    case "chat":
      // Reasoning is inside max_completion_tokens (OpenAI); the body passes through, so whichever alias the host reads.
      return { limit: stated, perChoice: stated, choices: client === "chat" || client === "gemini" ? requestedChoices(body) : 1 };
    case "responses":
      return { limit: stated, perChoice: stated, choices: 1 };
  }
}

/** Every upstream protocol, for an endpoint whose driver is not known (the most any of them could be asked for). */
export const UPSTREAM_PROTOCOLS: readonly UpstreamProtocol[] = ["chat", "messages", "gemini", "converse", "responses"];
