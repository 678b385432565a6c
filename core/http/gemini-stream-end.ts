// How a Gemini stream the guardrails stop mid-way (GUARDRAIL_BLOCKED: an output rule, an allow rule, output
// moderation) ends: as Google ends an answer its own filters stop, a last candidate with finishReason SAFETY whose
// finishMessage names the rule; then Google's error object; then the response is ended, not cut. What each client
// reads of it:
// - Gemini CLI (0.61 bundles @google/genai 1.30) reads neither finishMessage nor an `error` frame, only text: the
//   message is also the candidate's text, so it is shown; a turn with a finish reason and text is whole to it, not
//   one it sends again.
// - @google/genai 2.x throws its ApiError (400, the message) on the `error` frame.
// - @google/generative-ai ignores `error` frames, but its text() and functionCalls() throw on a SAFETY finish
//   ("Candidate was blocked due to SAFETY: <finishMessage>"); LangChain's ChatGoogleGenerativeAI calls functionCalls()
//   on every chunk, so the partial answer is not taken for a whole one.
// - Ended, not cut: a cut reaches a client before the frames it has not read yet ("TypeError: terminated", the
//   message lost). Other failures (an upstream cut, a deadline) keep the cut: they have no finish reason that tells
//   an older client the answer is not whole.
import type { GatewayError } from "../errors.ts";

/** The SAFETY candidate (an encoded `data:` frame) that ends a Gemini stream for `err`, when `err` is a guardrail's block. */
export function geminiBlockedEnding(err: GatewayError): string | undefined {
  if (err.code !== "GUARDRAIL_BLOCKED") return undefined;
  const candidate = {
    // After the text so far, which may end mid-sentence: the message on its own line, marked as not the model's.
    content: { role: "model", parts: [{ text: `\n\n[${err.message}]` }] },
    finishReason: "SAFETY",
    finishMessage: err.message,
    index: 0,
  };
  return `data: ${JSON.stringify({ candidates: [candidate] })}\r\n\r\n`;
}
