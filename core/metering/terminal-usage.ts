// A stream that failed after its upstream's terminal event said what the request used: a native Responses stream's
// response.failed carries the upstream's own final usage, as response.completed does. That count is billed as
// reported, as an ok stream's is. Without the mark a failed stream's reported usage may be a partial one (Anthropic's
// message_start, a Gemini chunk's running count), which the meter tops up with its estimate of the text relayed.
import { errorMark } from "../error-mark.ts";

const terminalUsage = errorMark("stream.terminal-usage");

/** Marks `err` (the stream's failure) as coming after the upstream's terminal event reported the usage. */
export const afterTerminalUsage = terminalUsage.set;
export const reportedTerminalUsage = terminalUsage.has;
