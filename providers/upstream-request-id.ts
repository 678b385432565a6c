// The provider's own id for one upstream call, passed to the client as x-mg-upstream-request-id: what an operator
// quotes in a ticket with OpenAI, Anthropic, AWS or Google. Read from the answer's headers only (never a stream's
// events), on a success and on an error the gateway relays.

/** An upstream answer's headers as undici gives them (AnswerHeaders; http.ts imports this file). */
type AnswerHeaders = Record<string, string | string[] | undefined>;

export const UPSTREAM_REQUEST_ID_HEADER = "x-mg-upstream-request-id";

/**
 * Where each provider puts it: OpenAI, Azure OpenAI, Groq and most OpenAI-protocol hosts x-request-id; Anthropic
 * request-id; Bedrock x-amzn-requestid; Google's x-goog-request-id where a front sends one (the Gemini API and
 * Vertex send none: their id is the answer's responseId, see fromGeminiAnswer).
 */
const ID_HEADERS = ["x-request-id", "request-id", "x-amzn-requestid", "x-goog-request-id"];

/** A value safe to pass on as a header: visible ASCII, bounded (an upstream's header or body is not the gateway's). */
const SAFE_ID = /^[\x21-\x7e]{1,256}$/;

/** The provider's id for the call, from its answer's headers; undefined when it sent none (or none passable). */
export function upstreamRequestId(headers: AnswerHeaders): string | undefined {
  for (const name of ID_HEADERS) {
    const v = headers[name];
    const id = Array.isArray(v) ? v[0] : v;
    if (typeof id === "string" && SAFE_ID.test(id)) return id;
  }
  return undefined;
}

/** `headers` (the result's or the error's own, if any) with the upstream's id added; unchanged when there is none. */
export function withUpstreamRequestId(headers: Record<string, string> | undefined, id: unknown): Record<string, string> | undefined {
  if (typeof id !== "string" || !SAFE_ID.test(id)) return headers;
  return { ...headers, [UPSTREAM_REQUEST_ID_HEADER]: id };
}

/** A one-call JSON answer's result headers: the call's id, or undefined when the provider sent none. */
export function idHeaders(headers: AnswerHeaders): Record<string, string> | undefined {
  return withUpstreamRequestId(undefined, upstreamRequestId(headers));
}

/** A Gemini answer's id: the headers' when sent, else its JSON's responseId (Google's only id for a generation). */
export function fromGeminiAnswer(headers: AnswerHeaders, json: unknown): string | undefined {
  const id = upstreamRequestId(headers);
  if (id !== undefined) return id;
  const responseId = (json as { responseId?: unknown } | null)?.responseId;
  return typeof responseId === "string" && SAFE_ID.test(responseId) ? responseId : undefined;
}
