// What one chat chunk holds of the answer: read only until a stream's first token, so the relay can time that token
// (a role-only chunk, an empty content or Azure's prompt filter results are not one) and hold what came before it.

/** Nothing of the answer (role only, empty strings, filter results, usage). */
export const NO_OUTPUT = 0;
/** Output the client reads: content, reasoning, a refusal, a tool call. */
export const TOKEN = 1;
/** No token, but the answer's end for a choice (a finish_reason): an empty answer is still an answer. */
export const FINISH = 2;
/**
 * Azure's prompt filter preamble (`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":
 * […]}`): not a chunk any chat client takes (object and id empty), so the passthrough drops it.
 */
export const PREAMBLE = 3;
export type ChunkOutput = typeof NO_OUTPUT | typeof TOKEN | typeof FINISH | typeof PREAMBLE;

const TOKEN_FIELDS = ["content", "reasoning_content", "reasoning", "refusal", "reasoning_details", "tool_calls", "function_call", "audio", "images"];

const holds = (v: unknown) => v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0);

export function chunkOutput(data: string): ChunkOutput {
  let chunk: any;
  try {
    chunk = JSON.parse(data);
  } catch {
    return NO_OUTPUT; // not JSON: relayed as it came, but no answer of itself
  }
  const choices = chunk?.choices;
  if (!Array.isArray(choices)) return NO_OUTPUT;
  if (choices.length === 0 && chunk.object === "" && chunk.prompt_filter_results !== undefined) return PREAMBLE;
  let out: ChunkOutput = NO_OUTPUT;
  for (const c of choices) {
    const delta = c?.delta;
    if (delta && typeof delta === "object") for (const f of TOKEN_FIELDS) if (holds(delta[f])) return TOKEN;
    if (holds(c?.finish_reason)) out = FINISH;
  }
  return out;
}
