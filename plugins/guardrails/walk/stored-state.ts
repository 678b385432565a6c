// Whether a request carries on state the provider keeps, so its user turn may live there rather than in the body: a
// Responses previous_response_id, conversation (its id or { id }), stored prompt (prompt: { id }) or item_reference
// input item; a Gemini cachedContent. That user turn was judged when it was sent, so a body with no user text of its
// own is not a client-written history and is not judged as one (request.ts).
const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";
const id = (v: unknown): boolean => typeof v === "string" && v.length > 0;

/** A Responses body that continues a stored response, conversation, prompt or item. */
export function responsesContinuesStored(body: any): boolean {
  if (!isObj(body)) return false;
  if (id(body.previous_response_id)) return true;
  const c = body.conversation;
  if (id(c) || (isObj(c) && id(c.id))) return true;
  if (isObj(body.prompt) && id(body.prompt.id)) return true;
  return Array.isArray(body.input) && body.input.some((it: unknown) => isObj(it) && it.type === "item_reference");
}

/** A Gemini body (or the generateContentRequest inside a countTokens body) that names a context cache. */
export function geminiContinuesStored(...bodies: unknown[]): boolean {
  return bodies.some((b) => isObj(b) && id(b.cachedContent));
}
