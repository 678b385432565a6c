// GET /responses/{id}/input_items as OpenAI pages it: a list object (data, first_id, last_id, has_more); `limit`
// 1..100 (default 20), `order` asc | desc (default desc: most recent first), `after` an item id of the previous page.
import { GatewayError } from "../errors.ts";
import type { Item } from "./conversation.ts";

export interface ItemPage {
  object: "list";
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const bad = (field: string, why: string) => new GatewayError(400, "INVALID_REQUEST", `${field}: ${why}`, { details: { field } });

export function pageOf(items: Item[], query: URLSearchParams): ItemPage {
  const limitText = query.get("limit");
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw bad("limit", "an integer from 1 to 100");
  const order = query.get("order") ?? "desc";
  if (order !== "asc" && order !== "desc") throw bad("order", 'either "asc" or "desc"');
  const ordered = order === "asc" ? items : [...items].reverse();
  let start = 0;
  const after = query.get("after");
  if (after !== null) {
    const at = ordered.findIndex((i) => i.id === after);
    if (at < 0) throw bad("after", `no item "${after}" in this response's input`);
    start = at + 1;
  }
  const data = ordered.slice(start, start + limit).map(asItemResource);
  return {
    object: "list", data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: start + limit < ordered.length,
  };
}

/** Kinds whose listed form carries a status (OpenAI: "populated when items are returned via API"). */
const WITH_STATUS = new Set(["message", "function_call", "function_call_output"]);

/**
 * An input item as the API lists it (ItemResource): a message given as `{ role, content }` is `type: "message"`,
 * and messages and function calls and their outputs carry a status (what the client sent was complete).
 */
function asItemResource(item: Item): Item {
  const type = item.type ?? (item.role !== undefined ? "message" : undefined);
  if (type === item.type && (item.status !== undefined || !WITH_STATUS.has(String(type)))) return item;
  return { ...item, ...(type !== undefined ? { type } : {}), ...(WITH_STATUS.has(String(type)) && item.status === undefined ? { status: "completed" } : {}) };
}
