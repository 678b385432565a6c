// A host that refuses any field it does not know (Mistral answers 422 extra_forbidden; host-conventions.ts) gets
// only its own subset of OpenAI's chat fields. What the gateway or a translation spells OpenAI's way is renamed where
// the host has the same knob under another name (Responses' max_output_tokens arrives as max_completion_tokens; a
// Gemini client's seed); OpenAI-only fields are left out, named unless at their neutral value. Mistral's chat request
// (its API reference and SDK) takes max_tokens, random_seed, metadata, parallel_tool_calls, reasoning_effort,
// prediction, n and the sampling knobs, but none of the fields below.
import { statedOutputLimit } from "../../core/metering/output-limit.ts";

/** OpenAI's name -> the host's. */
const RENAMED: Readonly<Record<string, string>> = { max_completion_tokens: "max_tokens", seed: "random_seed" };

const always = () => true;
const never = () => false;

/** OpenAI-only field -> whether a value leaves nothing a client would miss (then it goes without a report). */
const REFUSED: Readonly<Record<string, (v: unknown) => boolean>> = {
  // The gateway's own ask for usage; such a host puts usage on its last chunk unasked.
  stream_options: always,
  prompt_cache_key: never,
  prompt_cache_retention: never,
  verbosity: never,
  store: (v) => v === false, // nothing is stored there anyway
  service_tier: (v) => v === "auto" || v === "default",
  safety_identifier: never,
  user: never,
  logprobs: (v) => v === false,
  top_logprobs: never,
  logit_bias: never,
  web_search_options: never,
  modalities: (v) => Array.isArray(v) && v.every((m) => m === "text"),
  audio: never,
};

/** Rewrites `out` (the outgoing body) in place for such a host; returns the fields left out that held something. */
export function fitStrictHost(out: Record<string, unknown>): string[] {
  const dropped: string[] = [];
  // The limit under any alias the body carries, the largest: what the budget reserved (core/metering/output-limit.ts).
  const limit = statedOutputLimit(out);
  for (const [from, to] of Object.entries(RENAMED)) {
    if (!(from in out)) continue;
    const v = out[from];
    delete out[from];
    if (to === "max_tokens") {
      if (limit !== undefined) out.max_tokens = limit;
    } else if (v !== null && v !== undefined) {
      if (out[to] === undefined || out[to] === null) out[to] = v;
      else if (out[to] !== v) dropped.push(from); // the host's own spelling was sent too, and says otherwise
    }
  }
  for (const [k, neutral] of Object.entries(REFUSED)) {
    if (!(k in out)) continue;
    const v = out[k];
    delete out[k];
    if (v !== null && v !== undefined && !neutral(v)) dropped.push(k);
  }
  return dropped;
}
