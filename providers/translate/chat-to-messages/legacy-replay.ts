// Signed thinking across a legacy function-calling turn (`functions`, replay.ts for tool calls). Such a call carries
// no id: the answer's tool_use id is left out (chat-tool-forms-answer.ts) and the next turn's assistant function_call
// gets `call_fn<i>` from its message index (chat-tool-forms.ts). So the reasoning is kept under what the client does
// send back: the conversation before the call (the request's messages, which the next turn carries as messages
// [0..i-1]; the answer is appended right after them), the function's name and its arguments, hashed. Name and
// arguments alone would be shared by two conversations whose first call is the same (get_weather {"city":"Paris"}),
// and one user's next turn would get the other's thinking. A client that rewrites the conversation or the arguments
// finds nothing, and that request goes without thinking (replay.ts).
import { createHash, type Hash } from "node:crypto";
import type { SseEvent } from "../../../core/sse/parse.ts";

/**
 * A hash that has taken in the conversation a legacy call answers (serialised once; JSON text holds no raw NUL, so
 * the separator cannot be forged). Only legacy requests on thinking models pay for it.
 */
export function legacyConversationHash(conversation: readonly unknown[]): Hash {
  return createHash("sha256").update(JSON.stringify(conversation)).update("\0");
}

/** A legacy call's key hash: its conversation, then its name; its arguments follow (whole, or as streamed). */
export function legacyCallHash(conversation: Hash, name: string): Hash {
  return conversation.copy().update(name).update("\0");
}

/** The key for the call at message `index` whose conversation, name and arguments `hash` has taken in. */
export function legacyCallKey(index: number, hash: Hash): string {
  return `call_fn${index}.${hash.digest("hex").slice(0, 32)}`;
}

/** The arguments as the next turn's tool call carries them (chat-tool-forms.ts). */
function argumentsText(fc: any): string {
  return typeof fc.arguments === "string" ? fc.arguments : JSON.stringify(fc.arguments ?? {});
}

/** The legacy turn the conversation's trailing function results answer (an assistant function_call) and its key. */
export function legacyContinuingTurn(messages: unknown): { turn: any; key: string } | undefined {
  if (!Array.isArray(messages)) return undefined;
  const i = messages.findLastIndex((m: any) => m?.role === "assistant");
  const fc = messages[i]?.function_call;
  if (i < 0 || typeof fc?.name !== "string" || !messages.slice(i + 1).some((m: any) => m?.role === "function")) return undefined;
  const hash = legacyCallHash(legacyConversationHash(messages.slice(0, i)), fc.name).update(argumentsText(fc));
  return { turn: messages[i], key: legacyCallKey(i, hash) };
}

/**
 * A legacy answer's stream (function_call deltas) that keeps `reasoning()` under its call's key just before [DONE]
 * goes out, so a client's next turn finds it. `conversation` has taken in the request's `index` messages; the call's
 * arguments are hashed as they pass (constant memory).
 */
export async function* keepingLegacyReasoning(
  events: AsyncIterable<SseEvent>,
  index: number,
  conversation: Hash,
  reasoning: () => string | undefined,
  keep: (id: string, value: string) => void,
): AsyncGenerator<SseEvent> {
  let hash: Hash | undefined;
  for await (const ev of events) {
    if (ev.data === "[DONE]") {
      const value = reasoning();
      if (hash && value) keep(legacyCallKey(index, hash), value);
    } else if (ev.data.includes('"function_call"')) {
      const fc = JSON.parse(ev.data)?.choices?.[0]?.delta?.function_call;
      if (typeof fc?.name === "string" && !hash) hash = legacyCallHash(conversation, fc.name);
      if (typeof fc?.arguments === "string") hash?.update(fc.arguments);
    }
    yield ev;
  }
}
