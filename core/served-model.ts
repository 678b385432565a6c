// Every answer names the gateway model id that served it (the fallback's, when a fallback served), never the
// upstream's own id (DESIGN §4): clients key behaviour on it — Claude Code keeps signed thinking blocks only on
// assistant turns of the model it is calling, and drops them (a 400 on the next turn) when the id differs. The
// upstream's own id is kept for providerMetadata.gateway.upstreamModel and the x-mg-upstream-model header.
//
// Streams are the hot path: only the events that carry `model` are touched. A chat chunk carries it on every chunk,
// so its value is found and spliced as text (no parse, no re-serialisation); Messages' message_start and the
// Responses events that carry the whole response are a few per stream and are parsed.
import type { SseEvent } from "./sse/parse.ts";

/** The client protocols whose answers name a model. */
export type NamedProtocol = "chat" | "messages" | "responses";

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * A JSON answer (chat completion, message, response object): its `model` becomes the gateway id. Returns the
 * upstream's own id it replaced, when the answer named one.
 */
export function nameJsonModel(body: unknown, gatewayId: string): string | undefined {
  if (!isObject(body) || isObject(body.error)) return undefined;
  const own = body.model;
  body.model = gatewayId;
  return typeof own === "string" && own !== "" && own !== gatewayId ? own : undefined;
}

/** Events of the Responses API whose `response` is the whole response object. */
const CARRIES_RESPONSE = new Set(["response.created", "response.queued", "response.in_progress", "response.completed", "response.incomplete", "response.failed"]);
const TYPE = /^\{\s*"type"\s*:\s*"([^"]+)"/;
const MODEL_KEY = '"model"';

/** Renames the model in one stream's events; remembers the upstream's own id from the first event that named it. */
export class StreamModelNamer {
  /** The upstream's own id, once an event named one. */
  upstreamModel: string | undefined;
  private readonly quoted: string;

  constructor(private readonly protocol: NamedProtocol, private readonly gatewayId: string) {
    this.quoted = JSON.stringify(gatewayId);
  }

  /** The event as the client should see it: a chat chunk renamed is a new object, other events change in place. */
  rename(ev: SseEvent): SseEvent {
    if (this.protocol === "chat") return this.chatChunk(ev);
    const type = ev.event ?? TYPE.exec(ev.data)?.[1];
    if (this.protocol === "messages") return type === "message_start" ? this.nested(ev, "message") : ev;
    return type !== undefined && CARRIES_RESPONSE.has(type) ? this.nested(ev, "response") : ev;
  }

  /**
   * `"model":"x"` spliced as text. Inside a JSON string a quote is escaped, so an unescaped `"model"` followed by
   * `:` is a key; in a chat chunk the only object with that key is the chunk itself (tool arguments and content
   * are strings).
   */
  private chatChunk(ev: SseEvent): SseEvent {
    const d = ev.data;
    for (let at = d.indexOf(MODEL_KEY); at !== -1; at = d.indexOf(MODEL_KEY, at + MODEL_KEY.length)) {
      let i = skipSpace(d, at + MODEL_KEY.length);
      if (d.charCodeAt(i) !== 58 /* : */) continue;
      i = skipSpace(d, i + 1);
      if (d.charCodeAt(i) !== 34 /* " */) return ev; // null or not a string: nothing to name
      const end = stringEnd(d, i);
      if (end === -1) return ev;
      if (end - i === this.quoted.length && d.startsWith(this.quoted, i)) return ev;
      if (this.upstreamModel === undefined && end - i > 2) this.upstreamModel = safeParse(d.slice(i, end));
      const data = d.slice(0, i) + this.quoted + d.slice(end);
      return ev.event === undefined ? { data } : { event: ev.event, data };
    }
    return ev;
  }

  private nested(ev: SseEvent, key: "message" | "response"): SseEvent {
    let j: unknown;
    try {
      j = JSON.parse(ev.data);
    } catch {
      return ev; // not ours to judge: the relay above reports a broken event
    }
    const inner = isObject(j) ? j[key] : undefined;
    if (!isObject(inner) || inner.model === this.gatewayId) return ev;
    const own = inner.model;
    if (this.upstreamModel === undefined && typeof own === "string" && own !== "") this.upstreamModel = own;
    inner.model = this.gatewayId;
    // In place: a translator may keep state on the event object itself (the whole Responses object behind one the
    // client is shown less of, under a symbol), which the layers above read.
    ev.data = JSON.stringify(j);
    return ev;
  }
}

function skipSpace(s: string, i: number): number {
  for (let c = s.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = s.charCodeAt(++i));
  return i;
}

/** The index just past the JSON string that opens at `start`, or -1 when it does not close. */
function stringEnd(s: string, start: number): number {
  for (let q = s.indexOf('"', start + 1); q !== -1; q = s.indexOf('"', q + 1)) {
    let slashes = 0;
    while (s.charCodeAt(q - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return -1;
}

function safeParse(quoted: string): string | undefined {
  try {
    const v = JSON.parse(quoted);
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}
