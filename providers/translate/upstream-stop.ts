// Chat's finish_reason folds stop reasons Anthropic tells apart: a stop sequence (and which one matched) is "stop" like
// the end of a turn, a full context window is "length" like max_tokens. A chat answer made of an upstream's that says
// them (Bedrock Converse) carries what it said under a non-enumerable symbol key, never serialised, so a chat client
// sees chat as ever: on the answer (JSON) or on the chunk with the finish_reason (stream). A Messages client of the
// chained pair (messages-to-converse) reads it back and gets stop_reason and stop_sequence as Anthropic gives them.
const UPSTREAM_STOP: unique symbol = Symbol("mg.upstreamStop");

/** How the upstream said its answer ended, where chat cannot say it (a stop sequence only with the one that matched). */
export type UpstreamStop = { reason: "stop_sequence"; sequence: string } | { reason: "model_context_window_exceeded" };

/** `o` (a chat answer, or the stream event with its finish_reason) marked with `stop`; nothing to say, as it is. */
export function markStop<T extends object>(o: T, stop: UpstreamStop | undefined): T {
  if (stop) Object.defineProperty(o, UPSTREAM_STOP, { value: stop, configurable: true });
  return o;
}

/** What `o` was marked with, if anything. */
export function upstreamStopOf(o: unknown): UpstreamStop | undefined {
  return typeof o === "object" && o !== null ? (o as { [UPSTREAM_STOP]?: UpstreamStop })[UPSTREAM_STOP] : undefined;
}
