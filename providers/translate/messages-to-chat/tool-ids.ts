// Tool-use ids made for Gemini carry its thoughtSignature after a marker (chat-to-gemini/response.ts). Only Gemini
// wants it back; elsewhere it only lengthens the id past other upstreams' limits (OpenAI: 40 characters), as when
// Claude Code's /model moves a tool loop off a Gemini model. Made and parsed there, so no copy of the marker here.
import { signatureOf, toolCallId } from "../chat-to-gemini/response.ts";

/** The id without a Gemini signature suffix; any other id unchanged. */
export function unsignedToolId(id: unknown): unknown {
  if (typeof id !== "string") return id;
  const sig = signatureOf(id);
  if (sig === undefined) return id;
  // The suffix toolCallId appends for this signature (an empty base id gives exactly the suffix).
  const suffix = toolCallId({ functionCall: { id: "" }, thoughtSignature: sig });
  return id.endsWith(suffix) && id.length > suffix.length ? id.slice(0, -suffix.length) : id;
}
