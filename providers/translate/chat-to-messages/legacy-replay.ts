// Signed thinking across a legacy function-calling turn (`functions`, replay.ts for tool calls). Such a call carries
// no id: the answer's tool_use id is left out (chat-tool-forms-answer.ts) and the next turn's assistant function_call
// gets `call_fn<i>` from its message index (chat-tool-forms.ts). So the reasoning is kept under what the client does
// send back: that index (the answer is appended right after the request's messages), the function's name and its
// arguments, hashed. `call_fn<i>` alone would be shared by every conversation of the project; a client that rewrites
// the arguments finds nothing, and that request goes without thinking (replay.ts).
import { createHash, type Hash } from "node:crypto";
import type { SseEvent } from "../../../core/sse/parse.ts";

/** The start of a legacy call's key hash: its name; its arguments follow (whole, or piece by piece as streamed). */
export function legacyCallHash(name: string): Hash {
  return createHash("sha256").update(name).update("\0");
}

/** The key for the call at message `index` whose name and arguments `hash` has taken in. */
export function legacyCallKey(index: number, hash: Hash): string {
  return `call_fn${index}.${hash.digest("hex").slice(0, 32)}`;
}

/** The arguments as the next turn's tool call carries them (chat-tool-forms.ts). */
function argumentsText(fc: any): string {
  return typeof fc.arguments === "string" ? fc.arguments : JSON.stringify(fc.arguments ?? {});
}

/** The legacy turn the conversation's trailing function results answer (an assistant function_call) and its index. */
export function legacyContinuingTurn(messages: unknown): { turn: any; key: string } | undefined {
  if (!Array.isArray(messages)) return undefined;
  const i = messages.findLastIndex((m: any) => m?.role === "assistant");
  const fc = messages[i]?.function_call;
  if (i < 0 || typeof fc?.name !== "string" || !messages.slice(i + 1).some((m: any) => m?.role === "function")) return undefined;
  return { turn: messages[i], key: legacyCallKey(i, legacyCallHash(fc.name).update(argumentsText(fc))) };
}

/**
 * A legacy answer's stream (function_call deltas) that keeps `reasoning()` under its call's key just before [DONE]
 * goes out, so a client's next turn finds it. The call's arguments are hashed as they pass (constant memory).
 */
export async function* keepingLegacyReasoning(
  events: AsyncIterable<SseEvent>,
  index: number,
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
      if (typeof fc?.name === "string" && !hash) hash = legacyCallHash(fc.name);
      if (typeof fc?.arguments === "string") hash?.update(fc.arguments);
    }
    yield ev;
  }
}
