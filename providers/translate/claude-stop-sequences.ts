// Claude refuses a stop sequence that is empty or whitespace only, failing the whole request ("stop_sequences: each
// stop sequence must contain non-whitespace"; Bedrock relays the same on Converse), while OpenAI takes one (stop: "\n"
// is common). Translated to Claude such a stop is left out and the field named as dropped; the others are sent
// (LiteLLM drops them too, BerriAI/litellm#3286). A native Messages client's own stop_sequences are not translated.

const blank = (s: unknown) => typeof s === "string" && s.trim() === "";

/** A chat body's stop (a string or a list) as a list; undefined when there is none. */
export const stopList = (stop: unknown): unknown[] | undefined => (stop === undefined || stop === null ? undefined : Array.isArray(stop) ? stop : [stop]);

/** A chat body's stop as a list Claude takes (undefined when none is left), "stop" added to `dropped` for any left out. */
export function claudeStopSequences(stop: unknown, dropped: string[]): unknown[] | undefined {
  const stops = stopList(stop);
  if (!stops?.some(blank)) return stops;
  dropped.push("stop");
  const kept = stops.filter((s) => !blank(s));
  return kept.length ? kept : undefined;
}
