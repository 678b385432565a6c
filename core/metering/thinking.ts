// Reasoning knobs shared by the translators and the policies that reserve for them: effort names -> token budgets,
// and a dollar budget -> tokens through the endpoint's output price (spec: providerOptions.<provider>.thinkingBudget
// is dollars per request). In core because the budget must count a thinking budget exactly as a translator sends it.
import type { Target } from "../contracts/provider.ts";

/** LiteLLM's fixed budgets (reference §3.8); Anthropic's minimum budget is 1024. */
const EFFORT_TOKENS: Record<string, number> = { minimal: 1024, low: 1024, medium: 2048, high: 4096, xhigh: 8192, max: 16384 };

export const MIN_THINKING_TOKENS = 1024;

/** A catalog model that can think (tag `reasoning`): protocols whose thinking is on by default ask it to. */
export const canThink = (model: { config: { tags?: readonly string[] } }): boolean => model.config.tags?.includes("reasoning") === true;

/**
 * What a model's entry says of its thinking: true with the tag `reasoning`, false when it lists tags without it (every
 * catalog language model that cannot think: its reasoning knobs are refused upstream), undefined when it lists none
 * (an operator's own entry the gateway knows nothing of).
 */
export const thinksByTags = (model: { config: { tags?: readonly string[] } }): boolean | undefined =>
  model.config.tags === undefined ? undefined : model.config.tags.includes("reasoning");

/** A token budget as the smallest effort whose budget covers it, at most `cap` (Gemini's thinkingBudget, for chat). */
export function tokensToEffort(tokens: number, cap: "high" | "max" = "max"): string {
  for (const e of ["low", "medium", "high", "xhigh", "max"]) {
    if (e === cap || EFFORT_TOKENS[e]! >= tokens) return e;
  }
  return cap;
}

const LEVEL_EFFORT: Record<string, string> = { minimal: "minimal", low: "low", medium: "medium", high: "high" };

/**
 * Gemini's generationConfig.thinkingConfig as the reasoning effort its translators send on (a budget rounded up to
 * an effort, at most `cap`); undefined when thinking is not asked for or turned off (budget 0).
 */
export function geminiThinkingEffort(tc: any, cap: "high" | "max" = "max"): string | undefined {
  if (!tc || tc.thinkingBudget === 0) return undefined;
  if (typeof tc.thinkingBudget === "number" && tc.thinkingBudget > 0) return tokensToEffort(tc.thinkingBudget, cap);
  if (typeof tc.thinkingLevel === "string" && tc.thinkingLevel) return LEVEL_EFFORT[tc.thinkingLevel.toLowerCase()] ?? "medium";
  if (tc.thinkingBudget === -1 || tc.includeThoughts === true) return "medium";
  return undefined;
}

const MESSAGES_EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);

/**
 * The reasoning effort a Messages body's `thinking` stands for on a translated upstream: a budget_tokens rounded up
 * to an effort, adaptive thinking at output_config.effort (medium without one), at most `cap` (OpenAI-protocol
 * upstreams know no effort above high); undefined when thinking is off or of a kind no effort stands for —
 * `between_tools` included: the SDK documents it as thinking off (only short progress updates between tool calls,
 * which Anthropic returns as thinking blocks), so it reserves and asks for no reasoning.
 */
export function messagesThinkingEffort(body: any, cap: "high" | "max" = "max"): string | undefined {
  const t = body?.thinking;
  let effort: string;
  if (t?.type === "enabled") effort = typeof t.budget_tokens === "number" && t.budget_tokens > 0 ? tokensToEffort(t.budget_tokens, cap) : "medium";
  else if (t?.type === "adaptive") {
    const e = body?.output_config?.effort;
    effort = typeof e === "string" && MESSAGES_EFFORTS.has(e) ? e : "medium";
  } else return undefined;
  return cap === "high" && (effort === "xhigh" || effort === "max") ? "high" : effort;
}

/**
 * The thinking budget that stands for "off" on a Gemini model: 0 where thinking can be turned off, else the least
 * budget it takes. Gemini 2.5 Pro thinks always (budgets 128 to 32768): Google answers budget 0 with a 400 ("Budget 0
 * is invalid. This model only works in thinking mode.").
 */
export function geminiThinkingOff(upstreamModel: string): number {
  return /(^|[/.@-])gemini-2\.5-pro($|[-@:])/i.test(upstreamModel) ? 128 : 0;
}

export function effortToTokens(effort: string | undefined): number | undefined {
  if (!effort || effort === "none") return undefined;
  return EFFORT_TOKENS[effort];
}

/** Dollars -> whole output tokens at the target's output price; undefined when the price is unknown or zero. */
export function dollarsToTokens(dollars: number | undefined, target: Pick<Target, "pricing">): number | undefined {
  if (typeof dollars !== "number" || !(dollars > 0)) return undefined;
  const price = Number(target.pricing?.output);
  if (!(price > 0)) return undefined;
  // Integer micro-dollar arithmetic keeps 0.01 / 0.000015 from landing a token short.
  return Math.floor(Math.round(dollars * 1e12) / Math.round(price * 1e12));
}

export interface ReasoningKnobs {
  reasoningEffort?: string;
  reasoningSummary?: string;
  thinkingBudget?: number;
}

/** The provider-namespaced knobs for this target's provider (providerOptions.<provider>). */
export function knobsFor(body: any, provider: string): ReasoningKnobs | undefined {
  const k = body?.providerOptions?.[provider];
  return k && typeof k === "object" ? k : undefined;
}

/** Token budget asked for by a chat request: dollar budget first, then effort (knob or reasoning_effort). */
export function chatThinkingTokens(body: any, target: Pick<Target, "provider" | "pricing">): number | undefined {
  const knobs = knobsFor(body, target.provider);
  const fromDollars = dollarsToTokens(knobs?.thinkingBudget, target);
  if (fromDollars !== undefined) return fromDollars;
  return effortToTokens(knobs?.reasoningEffort ?? body?.reasoning_effort);
}

/** The request field that turned thinking on (what x-mg-dropped-params names when it is turned off). */
export function thinkingKnob(body: any, target: Target): string {
  const knobs = knobsFor(body, target.provider);
  if (dollarsToTokens(knobs?.thinkingBudget, target) !== undefined) return `providerOptions.${target.provider}.thinkingBudget`;
  if (knobs?.reasoningEffort !== undefined) return `providerOptions.${target.provider}.reasoningEffort`;
  return "reasoning_effort";
}
