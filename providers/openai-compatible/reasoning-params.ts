// OpenAI reasoning models (o-series, GPT-5) refuse `max_tokens` and the sampling knobs: a client cannot know that
// `openai/o4-mini` is one (the gateway's id hides it), so the request is fitted to the model here, from the
// catalog's `reasoning_model` flag. Knobs left at their neutral value are dropped silently; others are reported.

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
  if (out.max_tokens !== undefined && out.max_tokens !== null) {
    if (out.max_completion_tokens === undefined || out.max_completion_tokens === null) out.max_completion_tokens = out.max_tokens;
  }
  delete out.max_tokens;
  for (const k in REFUSED) {
    const v = out[k];
    if (v === undefined) continue;
    delete out[k];
    if (v !== null && v !== REFUSED[k]) dropped.push(k);
  }
  return dropped;
}
