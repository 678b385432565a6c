// The bound on a stored conversation (store.responses_max_conversation_bytes). Every stored response keeps its whole
// conversation, so a chain continued by previous_response_id grows its records with every turn, and the store's
// space with the square of the turns: without a bound, a long or heavy chain filled the disk, slowed every turn and,
// past the runtime's longest string, could no longer be saved (its next turn then found nothing). A request whose
// conversation would pass the bound is refused before any upstream call, naming what to change.
import { GatewayError } from "../errors.ts";
import { outputOf, type Conversation } from "./conversation.ts";
import { jsonInSlices } from "../store/responses-slices.ts";

export const DEFAULT_MAX_CONVERSATION_BYTES = 32 * 1024 * 1024;
const SETTING = "store.responses_max_conversation_bytes";

/** A JSON array's UTF-8 bytes, and how many items it has. */
interface Part { bytes: number; items: number }

/** Serialised a slice at a time: a request's own input may hold ~100 000 items (core/store/responses-slices.ts). */
const part = async (items: unknown[]): Promise<Part> => ({ bytes: Buffer.byteLength(await jsonInSlices(items), "utf8"), items: items.length });

/**
 * The conversation as a stored record keeps it: its input items as UTF-8 JSON. The earlier turns' input is the
 * previous record's, whose size its store knows (ResponseRecord.inputBytes): it is not serialised again on every
 * request that continues it (that took 24 ms for a 10 MB conversation, up to ~180 ms near the default bound, even
 * for a store: false continuation). Only the previous answer's output and this request's own items are.
 */
export async function conversationBytes(conv: Conversation): Promise<number> {
  const prev = conv.previous;
  if (!prev) return (await part(conv.items)).bytes;
  const input: Part = prev.inputBytes === undefined ? await part(prev.input) : { bytes: prev.inputBytes, items: prev.input.length };
  const output = await part(outputOf(prev));
  const own = await part(conv.items.slice(input.items + output.items));
  return joinedBytes([input, output, own]);
}

/** The bytes of one JSON array holding the parts' items in turn: their brackets once, a comma between non-empty parts. */
function joinedBytes(parts: Part[]): number {
  let bytes = 2;
  let nonEmpty = 0;
  for (const p of parts) {
    if (!p.items) continue;
    bytes += p.bytes - 2;
    nonEmpty++;
  }
  return bytes + Math.max(0, nonEmpty - 1);
}

/**
 * Throws a 400 when the conversation a request continues (previous_response_id) or would store (store not false)
 * is over `limit` bytes. A request that does neither is left alone: nothing is kept or read back. Returns the
 * conversation's bytes when it worked them out: the record that keeps it carries them (its inputBytes).
 */
export async function checkConversationSize(conv: Conversation, stored: boolean, limit: number): Promise<number | undefined> {
  if (!conv.previous && !stored) return undefined;
  const bytes = await conversationBytes(conv);
  if (bytes <= limit) return bytes;
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
