// Saving a finished response (store: true): once, at the end — a JSON answer before it is returned, a stream at its
// response.completed / response.incomplete event, before that event is passed on, so a client that starts its next
// request on it always finds the record. Other events pass untouched (only the few carrying the whole response are
// parsed, to stamp previous_response_id and to read the final output).
import type { SseEvent } from "../sse/parse.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import { mintId, type Item } from "./conversation.ts";

/**
 * Where a translator keeps the whole response when the client is shown less (reasoning encrypted_content hidden
 * without include): on the JSON body, or on the terminal stream event object (providers/translate/responses-to-chat/
 * reasoning.ts, FULL_RESPONSE; a symbol is never serialised).
 */
const FULL = Symbol.for("model-gateway.responses.full");

function fullOutputOf(x: unknown): Item[] | undefined {
  const full = (x as any)?.[FULL];
  return Array.isArray(full?.output) ? full.output : undefined;
}

/** What a record needs besides the response itself; read when the response is final. */
export interface SaveTarget {
  /**
   * null: store: false, nothing is kept (previous_response_id is still stamped). fullOutput: see FULL. Resolves
   * false when the record could not be kept: the response then says store: false.
   */
  save: ((response: Record<string, unknown>, fullOutput?: Item[]) => Promise<boolean>) | null;
  previousResponseId: string | null;
}

const CARRIES_RESPONSE = new Set(["response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed"]);
const FINAL = new Set(["response.completed", "response.incomplete"]);
const TYPE = /^\{\s*"type"\s*:\s*"([^"]+)"/;

const PREFIX: Record<string, string> = { message: "msg", function_call: "fc", reasoning: "rs" };

/** A translated response says previous_response_id: null; the gateway knows it. Output items without an id get one. */
export function stamp(response: Record<string, unknown>, previousResponseId: string | null): void {
  if (previousResponseId && response.previous_response_id == null) response.previous_response_id = previousResponseId;
  if (Array.isArray(response.output)) {
    for (const item of response.output as Item[]) if (item && typeof item === "object" && !item.id) item.id = mintId(PREFIX[String(item.type)] ?? "item");
  }
}

/** The JSON path: stamp, then save when the response finished (completed or incomplete). */
export async function persistJson(body: unknown, t: SaveTarget): Promise<void> {
  if (!body || typeof body !== "object" || (body as any).object !== "response") return;
  const r = body as Record<string, unknown>;
  stamp(r, t.previousResponseId);
  if (t.save && (r.status === "completed" || r.status === "incomplete") && !(await t.save(r, fullOutputOf(body)))) r.store = false;
}

/** The stream path: events as they come; the final one waits for the save. */
export async function* persistStream(events: AsyncIterable<SseEvent>, t: SaveTarget): AsyncGenerator<SseEvent> {
  for await (const e of events) {
    const type = e.event ?? TYPE.exec(e.data)?.[1];
    if (!type || !CARRIES_RESPONSE.has(type) || (!t.previousResponseId && !(t.save && FINAL.has(type)))) {
      yield e;
      continue;
    }
    const j = JSON.parse(e.data);
    const r = j?.response;
    if (!r || typeof r !== "object") {
      yield e;
      continue;
    }
    stamp(r, t.previousResponseId);
    if (t.save && FINAL.has(type) && !(await t.save(r, fullOutputOf(e)))) r.store = false;
    yield { ...e, data: JSON.stringify(j) };
  }
}

export type { ResponseRecord };
