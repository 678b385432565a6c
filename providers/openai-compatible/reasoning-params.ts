// OpenAI reasoning models (o-series, GPT-5) refuse `max_tokens` and the sampling knobs: a client cannot know that
// `openai/o4-mini` is one (the gateway's id hides it), so the request is fitted to the model here. The model is
// recognised from its upstream id, as the OpenAI clients themselves do; the catalog's `reasoning_model` flag, when
// set, overrides that either way (an Azure deployment name says nothing). Knobs left at their neutral value are
// dropped silently; others are reported.
import { statedOutputLimit } from "../../core/metering/output-limit.ts";
import type { Target } from "../../core/contracts/provider.ts";

/**
 * o1, o3-mini, o4-mini... and every GPT-5 but its `-chat` variants (gpt-5-chat-latest takes the classic
 * parameters), as the Vercel AI SDK and the OpenAI Agents SDK tell them apart. A routing prefix (`openai/o3` on
 * an aggregator) is looked through.
 */
export function isOpenAIReasoningModel(upstreamModel: string): boolean {
  const id = upstreamModel.slice(upstreamModel.lastIndexOf("/") + 1).toLowerCase();
  if (/^o\d+(?:-|$)/.test(id)) return true;
  return /^gpt-5(?:[.-]|$)/.test(id) && !/^gpt-5(?:\.\d+)?-chat(?:-|$)/.test(id);
}

/** The catalog's flag when the operator set it, else what the upstream id says. */
export function isReasoningTarget(target: Pick<Target, "reasoningModel" | "upstreamModel">): boolean {
  return target.reasoningModel ?? isOpenAIReasoningModel(target.upstreamModel);
}

/** Knob -> its neutral value (sending it is harmless but refused, so it is dropped without a report). */
const REFUSED: Record<string, unknown> = {
  temperature: 1,
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  logprobs: false,
  top_logprobs: undefined,
  logit_bias: undefined,
};

/** Rewrites `out` (the outgoing body) in place; returns the fields dropped that the client set to a real value. */
export function fitReasoningModel(out: Record<string, unknown>): string[] {
  const dropped: string[] = [];
  // The limit under any alias the body carries, the largest: what the budget reserved (core/metering/output-limit.ts).
  const limit = statedOutputLimit(out);
  delete out.max_tokens;
  if (limit !== undefined) out.max_completion_tokens = limit;
  for (const k in REFUSED) {
    const v = out[k];
    if (v === undefined) continue;
    delete out[k];
    if (v !== null && v !== REFUSED[k]) dropped.push(k);
  }
  return dropped;
}
