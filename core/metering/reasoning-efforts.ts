// The reasoning efforts the open reasoning models behind OpenAI-protocol hosts take, and how each says "thinking off",
// keyed by upstream model id as openai-reasoning-models.ts keys OpenAI's own. A translator fits the effort it made from
// another protocol's knob (a Messages budget, a Gemini thinkingBudget or thinkingLevel, a Responses reasoning.effort)
// to the model, so the host never refuses a value the client did not send; a native chat request stays as sent.
// The rule: an effort the model does not take becomes the highest one it takes that costs no more than asked, or its
// least when it takes nothing that low; either way named in x-mg-dropped-params as the client's field.
import type { Target } from "../contracts/provider.ts";
import { leastOpenAIEffort } from "./openai-reasoning-models.ts";

/** Efforts from least to most. */
const ORDER = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

interface EffortRule {
  /** Matches the upstream id (a routing prefix looked through unless `bare`). */
  id: RegExp;
  /** Only an id without a routing prefix (the host's own API: an aggregator has its own knobs). */
  bare?: boolean;
  takes: readonly string[];
  /** Thinking off: the least effort it takes (named), or the request fields that turn it off (not named). */
  off: { effort: string } | { fields: Record<string, unknown> };
}

const RULES: readonly EffortRule[] = [
  // gpt-oss (Ollama writes its tag with a colon: gpt-oss:20b): "Configurable reasoning effort (low, medium, high)", medium by default (openai/gpt-oss-20b model card,
  // huggingface.co/openai/gpt-oss-20b); Groq refuses anything else: "reasoning_effort must be one of low, medium, or
  // high". It cannot stop reasoning: off is low.
  { id: /^gpt-oss[-:]/, takes: ["low", "medium", "high"], off: { effort: "low" } },
  // grok-3-mini (and -fast): low or high only: xAI answers medium with 400 "Supported values: low, high", and
  // @ai-sdk/xai coerced medium to low for every model before grok-4.3 "because 'medium' was not a valid value"
  // (vercel/ai, @ai-sdk/xai 4.0.0-canary.61). It always reasons: off is low.
  { id: /^grok-3-mini(?:-|$)/, takes: ["low", "high"], off: { effort: "low" } },
  // DeepSeek's own API (deepseek-flash, deepseek-v4-*): thinking on by default; chat takes reasoning_effort and maps
  // minimal/low to low, medium/high/xhigh to high, max to max itself; off is {"thinking": {"type": "disabled"}}
  // (api-docs.deepseek.com/guides/thinking_mode). "none" is the Responses API's spelling only.
  { id: /^deepseek-(?:flash|pro|v4)(?:[-.]|$)/, bare: true, takes: ["minimal", "low", "medium", "high", "xhigh", "max"], off: { fields: { thinking: { type: "disabled" } } } },
];

function ruleFor(upstreamModel: string): EffortRule | undefined {
  const slash = upstreamModel.lastIndexOf("/");
  const id = upstreamModel.slice(slash + 1).toLowerCase();
  return RULES.find((r) => r.id.test(id) && !(r.bare && slash >= 0));
}

/** `effort` as this model takes it; `fitted` when it had to change (the client's field is then named). */
export function fitEffort(target: Pick<Target, "upstreamModel">, effort: string): { effort: string; fitted: boolean } {
  const rule = ruleFor(target.upstreamModel);
  if (!rule || rule.takes.includes(effort) || !ORDER.includes(effort)) return { effort, fitted: false };
  const asked = ORDER.indexOf(effort);
  const below = rule.takes.filter((e) => ORDER.indexOf(e) <= asked);
  return { effort: below.length ? below[below.length - 1]! : rule.takes[0]!, fitted: true };
}

/** How thinking off goes to a chat upstream: an effort or request fields; `named` when it is not off itself. */
export interface ThinkingOff { effort?: string; fields?: Record<string, unknown>; named: boolean }

/**
 * Thinking off on this model: its own off (DeepSeek's thinking field, GPT-5.1's none), else the least effort it
 * takes, named; undefined where the model thinks only when asked or is not known to reason.
 */
export function thinkingOffFor(target: Pick<Target, "reasoningModel" | "upstreamModel">): ThinkingOff | undefined {
  const rule = ruleFor(target.upstreamModel);
  if (rule) return "fields" in rule.off ? { fields: rule.off.fields, named: false } : { effort: rule.off.effort, named: true };
  const least = leastOpenAIEffort(target);
  return least ? { effort: least, named: least !== "none" } : undefined;
}
