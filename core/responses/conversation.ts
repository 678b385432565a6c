// The conversation a Responses request stands for. With previous_response_id it is the previous response's whole
// input, then its output, then this request's input (instructions are not inherited, as in OpenAI); item_reference
// items are replaced by the stored output items they name. Everything is looked up in the caller's project and
// kind of key (live or sandbox) only.
// Stored input items get ids (input_items lists and pages by them); the body the upstream sees does not carry the
// ids the gateway minted.
import { GatewayError } from "../errors.ts";
import { randomHex } from "../http/ids.ts";
import { mapInSlices } from "../store/responses-slices.ts";
import type { ResponseOwner, ResponseRecord, ResponseStore } from "../store/responses-types.ts";

export type Item = Record<string, unknown>;

export interface Conversation {
  /** The body a translated (or non-matching native) attempt gets: the whole conversation, no previous_response_id. */
  rebuilt: any;
  /** The body a native attempt on the provider that made the previous response gets: previous_response_id kept. */
  passthrough: any;
  /** Every input item of the conversation, each with an id: what a stored record keeps. */
  items: Item[];
  previous?: ResponseRecord;
}

const PREFIX: Record<string, string> = { message: "msg", function_call: "fc", function_call_output: "fco", reasoning: "rs" };

export const mintId = (prefix: string) => `${prefix}_${randomHex(12)}`;

/**
 * This request's input as items, in the shape input_items lists them: a string is one user message; a shorthand
 * message gets its type, and string content becomes one input_text (output_text for the assistant) part.
 */
export function inputItems(input: unknown): Item[] {
  if (typeof input === "string") return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  return Array.isArray(input) ? input.map(inputItem) : [];
}

/** inputItems, a slice of a long input at a time (core/store/responses-slices.ts says why). */
function inputItemsInSlices(input: unknown): Promise<Item[]> {
  return Array.isArray(input) ? mapInSlices(input, inputItem) : Promise.resolve(inputItems(input));
}

/** One item of an input array, in the shape input_items lists it. */
function inputItem(i: any): Item {
  const item: Item = i && typeof i === "object" && !("type" in i) && "role" in i ? { type: "message", ...i } : { ...i };
  if (item.type === "message" && typeof item.content === "string") {
    item.content = [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content }];
  }
  return item;
}

const hasOwnId = (item: Item) => typeof item.id === "string" && item.id !== "";

/**
 * The item with an id: its own, or a fresh one given in place. An item without one is always this request's own copy
 * (inputItem made it; stored items have theirs): a copy per item doubled the garbage of a 99 000-item input.
 */
function withId(item: Item): Item {
  if (!hasOwnId(item)) item.id = mintId(PREFIX[String(item.type)] ?? "item");
  return item;
}

/**
 * An item (before withId) as the upstream should see it: without an id where withId mints one (an input message has
 * no id in the API; an empty one is replaced), and a copy where withId will give it one in place.
 */
function upstreamItem(item: Item): Item {
  if (hasOwnId(item)) return item;
  const { id: _id, ...rest } = item;
  return rest;
}

/**
 * A reasoning item sent back by id without encrypted_content: the client was not shown it (store on, no include) but
 * the stored item kept it — appending a response's output to the next input then continues a Claude tool loop.
 */
const bareReasoning = (it: Item) => it.type === "reasoning" && !it.encrypted_content && typeof it.id === "string" && it.id !== "";

/**
 * Replace item_reference items by the stored items they name (an unknown id is a 400 naming input[i].id), and give
 * bare reasoning items (bareReasoning) their stored encrypted_content (an unknown one stays as sent).
 */
async function resolveReferences(store: ResponseStore, owner: ResponseOwner, items: Item[], now: number): Promise<Item[]> {
  const refs = items.flatMap((it, i) => (it.type === "item_reference" ? [{ i, id: String(it.id ?? "") }] : []));
  const bare = items.flatMap((it, i) => (bareReasoning(it) ? [{ i, id: it.id as string }] : []));
  if (!refs.length && !bare.length) return items;
  const found = await store.items(owner, [...new Set([...refs, ...bare].map((r) => r.id))], now);
  const out = [...items];
  for (const b of bare) {
    const stored = found.get(b.id)?.item;
    if (stored?.type === "reasoning" && typeof stored.encrypted_content === "string") out[b.i] = { ...out[b.i], encrypted_content: stored.encrypted_content };
  }
  for (const r of refs) {
    const hit = found.get(r.id);
    if (!hit) {
      throw new GatewayError(400, "INVALID_REQUEST", `input[${r.i}].id: no stored item "${r.id}" for this key (it is unknown, expired, another project's, made with the other kind of key (live or sandbox), or its response was stored with store: false or deleted)`, {
        details: { field: `input[${r.i}].id` },
      });
    }
    out[r.i] = hit.item;
  }
  return out;
}

/** Previous records kept input items with ids: the upstream gets them without the ones a gateway minted earlier. */
function storedForUpstream(items: Item[]): Item[] {
  return items.map((i) => {
    if (i.type === "message" && i.role !== "assistant" || i.type === "function_call_output") {
      const { id: _id, ...rest } = i;
      return rest;
    }
    return i;
  });
}

export async function buildConversation(store: ResponseStore, owner: ResponseOwner, body: any, now: number): Promise<Conversation> {
  const previousId: unknown = body.previous_response_id;
  let previous: ResponseRecord | undefined;
  if (typeof previousId === "string" && previousId) {
    previous = await store.get(owner, previousId, now);
    if (!previous) {
      throw new GatewayError(404, "NOT_FOUND", `previous_response_id: no stored response "${previousId}" for this key (it is unknown, expired, deleted, another project's, made with the other kind of key (live or sandbox), or created with store: false)`, {
        details: { field: "previous_response_id" },
      });
    }
  }
  const hasRefs = Array.isArray(body.input) && body.input.some((i: any) => i?.type === "item_reference" || bareReasoning(i ?? {}));
  const resolved = await resolveReferences(store, owner, await inputItemsInSlices(body.input), now);
  // The upstream's copies first: withId gives ids in place. Without state the upstream gets body.input as sent.
  const ownUpstream = hasRefs || previous ? await mapInSlices(resolved, upstreamItem) : [];
  const own = await mapInSlices(resolved, withId);
  const ownInput = hasRefs ? ownUpstream : body.input;
  const earlier = previous ? [...previous.input, ...outputOf(previous)] : [];
  const { previous_response_id: _drop, ...rest } = body;
  const rebuilt = previous ? { ...rest, input: [...storedForUpstream(earlier), ...ownUpstream] } : hasRefs ? { ...rest, input: ownInput } : body;
  const passthrough = hasRefs ? { ...body, input: ownInput } : body;
  return { rebuilt, passthrough, items: [...earlier, ...own], previous };
}

/** The previous output as the upstream needs it back: with the reasoning state the client may not have been shown. */
export function outputOf(rec: ResponseRecord): Item[] {
  const out = rec.fullOutput ?? rec.response.output;
  return Array.isArray(out) ? (out as Item[]) : [];
}
