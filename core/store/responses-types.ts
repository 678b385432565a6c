// Stored Responses API state (issue 13): one record per response id, kept per project until it expires. The
// record holds the whole conversation the model saw (so a previous_response_id is one read, and deleting or
// expiring an older response never breaks a newer one) and indexes each output item by id for item_reference.

/** One stored response. Times are ms since the epoch. */
export interface ResponseRecord {
  id: string;
  project: string;
  createdAt: number;
  expiresAt: number;
  /** The response object exactly as returned to the client (status, output, usage, ...). */
  response: Record<string, unknown>;
  /**
   * The output with what the client was not shown (reasoning items' encrypted_content, unless it asked with
   * include), when that differs from response.output: what a rebuilt conversation and item_reference use.
   */
  fullOutput?: Record<string, unknown>[];
  /** Every input item of the conversation up to and including this request's input, each with an id. */
  input: Record<string, unknown>[];
  /**
   * `input`'s size as UTF-8 JSON, so the conversation bound need not serialise it again on each continuation
   * (core/responses/conversation-limit.ts): given when saved (the bound worked it out) and kept by the memory and
   * Redis stores; SQLite gives the size of the text it holds. Absent on a record saved before it was kept.
   */
  inputBytes?: number;
  /**
   * `input` as JSON text (JSON.stringify(input)), when the saving request made it: a conversation may hold ~100 000
   * items, and serialised inside put, in one go, it held every other request for a quarter of a second or more (in
   * slices, it would count against store.timeout_ms). Stores keep this text as the input; never given by get.
   */
  inputJson?: string;
  /** The provider and public model that served it. */
  provider: string;
  model: string;
  /** Served by an upstream's own /responses (its id is the upstream's, which holds its own state). */
  native: boolean;
  /**
   * Served with the project's own key for `provider` (BYOK), not the gateway's: its upstream copy is the project's
   * account's, never to be deleted with the gateway's key. Absent on a record saved before it was kept.
   */
  projectKey?: boolean;
  /**
   * Made with a sandbox key (the simulator's answer): only its project's sandbox keys see it, and they see no live
   * key's record. Absent on a live key's record, and on every record saved before it was kept (those are live).
   */
  sandbox?: boolean;
  previousResponseId: string | null;
}

/**
 * Whose records a request sees: its project's, of its kind of key. A project's sandbox keys have a key space of their
 * own (as for idempotency and the response cache): another kind's id is absent, as another project's is.
 */
export interface ResponseOwner {
  project: string;
  sandbox: boolean;
}

/** Whether `rec` is `owner`'s: the same project, and made with the same kind of key. */
export function ownedBy(rec: { project: string; sandbox?: boolean }, owner: ResponseOwner): boolean {
  return rec.project === owner.project && (rec.sandbox === true) === owner.sandbox;
}

/** Who made `rec`, as a ResponseOwner. */
export function ownerOf(rec: { project: string; sandbox?: boolean }): ResponseOwner {
  return { project: rec.project, sandbox: rec.sandbox === true };
}

/** A stored output item found by its id (item_reference). */
export interface StoredItem {
  responseId: string;
  item: Record<string, unknown>;
}

export interface ResponseStore {
  /**
   * Save (or replace) a record and index its output items by id (its input from inputJson when given). Resolves
   * false when it was not kept: its id is another project's record (ownsId), which stays as it was.
   */
  put(rec: ResponseRecord): Promise<boolean>;
  /** The caller's record, or undefined when unknown, expired, another project's or another kind of key's. */
  get(owner: ResponseOwner, id: string, now: number): Promise<ResponseRecord | undefined>;
  /** Remove the caller's record and its item index; false when there was none. */
  delete(owner: ResponseOwner, id: string, now: number): Promise<boolean>;
  /** Output items of the caller's unexpired records (its project, its kind of key), by item id (ids not found are absent). */
  items(owner: ResponseOwner, ids: string[], now: number): Promise<Map<string, StoredItem>>;
}

/** The (full) output items of a record that carry an id (the only ones an item_reference can name). */
export function outputItemsOf(rec: ResponseRecord): Record<string, unknown>[] {
  const out = rec.fullOutput ?? rec.response.output;
  return Array.isArray(out) ? out.filter((i): i is Record<string, unknown> => !!i && typeof i === "object" && typeof (i as any).id === "string") : [];
}

/**
 * Whether `rec` may be saved over what the id holds now: nothing, or a record of the same project and kind of key.
 * Ids are the upstream's on native models, so an upstream that repeats one (or picks another project's on purpose)
 * must never replace another project's record, nor a live key's record a sandbox one; the second record is then not
 * kept, and put says so (its answer then says store: false, as for any record that could not be kept).
 */
export function ownsId(current: { project: string; sandbox?: boolean } | undefined, rec: ResponseRecord): boolean {
  return current === undefined || ownedBy(current, ownerOf(rec));
}
