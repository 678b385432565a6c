// A stream that failed after its upstream's terminal event said what the request used: a native Responses stream's
// response.failed carries the upstream's own final usage, as response.completed does. That count is billed as
// reported, as an ok stream's is. Without the mark a failed stream's reported usage may be a partial one (Anthropic's
// message_start, a Gemini chunk's running count), which the meter tops up with its estimate of the text relayed.
const TERMINAL_USAGE = Symbol.for("model-gateway.stream.terminal-usage");

/** Marks `err` (the stream's failure) as coming after the upstream's terminal event reported the usage. */
export function afterTerminalUsage<E extends object>(err: E): E {
  (err as Record<symbol, unknown>)[TERMINAL_USAGE] = true;
  return err;
}

export function reportedTerminalUsage(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[TERMINAL_USAGE] === true;
}
