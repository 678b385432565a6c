// Whether a kept Responses API answer (the response cache's) may still be replayed. It stands on stored state: the
// response it created (store on: the client retrieves and continues it by that id), the previous_response_id it
// continued and the stored items its input referenced. Once one of them is deleted or has expired, the same request
// asked afresh is a new response (or a 404, a 400), so the kept answer is not: replaying it would hand out an id
// that can no longer be retrieved or continued. One read per id (most hits have one), only for Responses hits.
// A request on state the provider changes under the same body (a conversation, a stored prompt's latest version, a
// named container) is never kept at all: changesUnderIt.
import type { StoredResponse } from "../store/types.ts";
import type { ResponseOwner, ResponseStore } from "../store/responses-types.ts";

/** The response id a kept answer carries: the JSON body's, or a stream's first event that carries the response. */
export function answerIdOf(answer: StoredResponse): string | undefined {
  if (answer.kind === "json") {
    const id = (answer.body as { id?: unknown } | null)?.id;
    return typeof id === "string" ? id : undefined;
  }
  if (answer.kind !== "stream") return undefined;
  // response.created comes first and is small (no output yet); parse only events that carry a response object.
  for (const e of answer.events) {
    if (!e.data.includes('"response"')) continue;
    try {
      const id = JSON.parse(e.data)?.response?.id;
      if (typeof id === "string") return id;
    } catch {
      // not JSON: look further
    }
  }
  return undefined;
}

/**
 * The request stands on state the provider changes while the body stays the same, so the same request is a new
 * question each time: a conversation (`conversation`: its id or `{ id }`; each turn is added to it), a stored
 * prompt named without a `version` (its latest version can change) and a tool run in a container named by id (a code
 * interpreter's `container: "cntr_…"`: its files change as code runs in it, and it expires). Its answer is neither
 * kept nor replayed. A pinned prompt version does not change; a fresh container (`{ type: "auto" }`) is made for the
 * request from what its body says; a previous_response_id is checked by replayable.
 */
export function changesUnderIt(body: any): boolean {
  if (body?.conversation != null) return true;
  if (Array.isArray(body?.tools) && body.tools.some((t: any) => typeof t?.container === "string" && t.container !== "")) return true;
  const prompt = body?.prompt;
  return prompt != null && (typeof prompt !== "object" || prompt.version == null || prompt.version === "");
}

export async function replayable(store: ResponseStore, owner: ResponseOwner, body: any, answer: StoredResponse, now: number): Promise<boolean> {
  const ids: string[] = [];
  if (body?.store !== false) {
    const own = answerIdOf(answer);
    if (own === undefined) return false; // a stored answer whose id cannot be read: do not vouch for it
    ids.push(own);
  }
  if (typeof body?.previous_response_id === "string" && body.previous_response_id) ids.push(body.previous_response_id);
  const refs = Array.isArray(body?.input) ? body.input.flatMap((i: any) => (i?.type === "item_reference" ? [String(i.id ?? "")] : [])) : [];
  const [records, items] = await Promise.all([
    Promise.all(ids.map((id) => store.get(owner, id, now))),
    refs.length ? store.items(owner, refs, now) : undefined,
  ]);
  return records.every((r) => r !== undefined) && (!items || refs.every((id: string) => items.has(id)));
}
