// The bound on a stored conversation (store.responses_max_conversation_bytes). Every stored response keeps its whole
// conversation, so a chain continued by previous_response_id grows its records with every turn, and the store's
// space with the square of the turns: without a bound, a long or heavy chain filled the disk, slowed every turn and,
// past the runtime's longest string, could no longer be saved (its next turn then found nothing). A request whose
// conversation would pass the bound is refused before any upstream call, naming what to change.
import { GatewayError } from "../errors.ts";
import type { Conversation } from "./conversation.ts";

export const DEFAULT_MAX_CONVERSATION_BYTES = 32 * 1024 * 1024;
const SETTING = "store.responses_max_conversation_bytes";

/** The conversation as a stored record keeps it: its input items as UTF-8 JSON. */
export function conversationBytes(conv: Conversation): number {
  return Buffer.byteLength(JSON.stringify(conv.items), "utf8");
}

/**
 * Throws a 400 when the conversation a request continues (previous_response_id) or would store (store not false)
 * is over `limit` bytes. A request that does neither is left alone: nothing is kept or read back.
 */
export function checkConversationSize(conv: Conversation, stored: boolean, limit: number): void {
  if (!conv.previous && !stored) return;
  const bytes = conversationBytes(conv);
  if (bytes <= limit) return;
  const details = { setting: SETTING, limit_bytes: limit, bytes };
  if (conv.previous) {
    throw new GatewayError(400, "INVALID_REQUEST",
      `previous_response_id: the conversation continued from "${conv.previous.id}" is ${bytes} bytes with this input, over ${SETTING} (${limit}): start a new conversation (send what it needs in input, without previous_response_id)`,
      { details: { field: "previous_response_id", ...details } });
  }
  throw new GatewayError(400, "INVALID_REQUEST",
    `input: ${bytes} bytes, over ${SETTING} (${limit}), the largest conversation a stored response keeps: send it with store: false`,
    { details: { field: "input", ...details } });
}
