// Is a provider's 2xx JSON an answer of its protocol at all? parseAnswer (answer-check.ts) knows the body is JSON
// and no error envelope; these say it has the one field every real answer of the protocol carries, so that `null`,
// `{}` or `{"choices": []}` on a 200 is the provider's error (502 invalid_answer, retried, unbilled, counted against
// it), never relayed to the client as a success nor handed to a translator as an empty "completed" answer. A few
// typeof tests on the parsed object each, on the hot path: no schema validation, no copies. Shapes the real APIs
// send (chat content null beside tool_calls, Anthropic content [] on an end_turn, Gemini without candidates when the
// prompt was blocked, Responses output [] on a failed response) stay answers.
import { GatewayError } from "../core/errors.ts";

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The 502 for a body that is JSON but not an answer: retryable, as parseAnswer's other refusals. */
export function invalidAnswer(provider: string, why: string): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider}'s answer ${why}; it was dropped`, {
    retryable: true, details: { provider, reason: "invalid_answer" },
  });
}

/** OpenAI chat completion: `choices`, a non-empty array of objects each with a `message` object. */
export function checkChatAnswer(provider: string, json: unknown): Record<string, any> {
  if (!isObject(json)) throw invalidAnswer(provider, "is not a JSON object");
  const choices = json.choices;
  if (!Array.isArray(choices) || choices.length === 0) throw invalidAnswer(provider, "has no choices array");
  for (const c of choices) if (!isObject(c) || !isObject(c.message)) throw invalidAnswer(provider, "has a choice without a message");
  return json;
}

/**
 * Anthropic Message: `content` an array of blocks (empty is legitimate: an end_turn with nothing to add); a text
 * block's `text` and a thinking block's `thinking` strings, since a translator would otherwise write "undefined".
 */
export function checkMessagesAnswer(provider: string, json: unknown): Record<string, any> {
  if (!isObject(json)) throw invalidAnswer(provider, "is not a JSON object");
  const content = json.content;
  if (!Array.isArray(content)) throw invalidAnswer(provider, "has no content array");
  for (const b of content) {
    if (!isObject(b)) throw invalidAnswer(provider, "has a content block that is not an object");
    if (b.type === "text" && typeof b.text !== "string") throw invalidAnswer(provider, "has a text block without text");
    if (b.type === "thinking" && typeof b.thinking !== "string") throw invalidAnswer(provider, "has a thinking block without thinking");
  }
  return json;
}

/** Gemini GenerateContentResponse: `candidates` an array of objects; none only for a prompt Gemini blocked. */
export function checkGeminiAnswer(provider: string, json: unknown): Record<string, any> {
  if (!isObject(json)) throw invalidAnswer(provider, "is not a JSON object");
  const candidates = json.candidates;
  if (candidates === undefined || (Array.isArray(candidates) && candidates.length === 0)) {
    if (isObject(json.promptFeedback) && json.promptFeedback.blockReason) return json;
    throw invalidAnswer(provider, "has no candidates and no promptFeedback.blockReason");
  }
  if (!Array.isArray(candidates)) throw invalidAnswer(provider, "has a candidates field that is not an array");
  for (const c of candidates) if (!isObject(c)) throw invalidAnswer(provider, "has a candidate that is not an object");
  return json;
}

/** OpenAI Response object: `output` an array (empty on a failed or cancelled response). */
export function checkResponsesAnswer(provider: string, json: unknown): Record<string, any> {
  if (!isObject(json)) throw invalidAnswer(provider, "is not a JSON object");
  if (!Array.isArray(json.output)) throw invalidAnswer(provider, "has no output array");
  return json;
}

/** Bedrock Converse: `output.message.content` an array. */
export function checkConverseAnswer(provider: string, json: unknown): Record<string, any> {
  if (!isObject(json)) throw invalidAnswer(provider, "is not a JSON object");
  const output = json.output;
  if (!isObject(output) || !isObject(output.message) || !Array.isArray(output.message.content)) {
    throw invalidAnswer(provider, "has no output.message.content array");
  }
  return json;
}
