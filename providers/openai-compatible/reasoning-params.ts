// OpenAI reasoning models (o-series, GPT-5) refuse `max_tokens` and the sampling knobs: a client cannot know that
// `openai/o4-mini` is one (the gateway's id hides it), so the request is fitted to the model here. The model is
// recognised from its upstream id, as the OpenAI clients themselves do; the catalog's `reasoning_model` flag, when
// set, overrides that either way (an Azure deployment name says nothing). Knobs left at their neutral value are
// dropped silently; others are reported.
import { statedOutputLimit } from "../../core/metering/output-limit.ts";

// Recognised in core (a translator carries a client's "thinking off" to these models too).
export { isOpenAIReasoningModel, isReasoningTarget } from "../../core/metering/openai-reasoning-models.ts";

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
