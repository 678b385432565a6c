// Every answer names the gateway model id that served it (the fallback's, when a fallback served), never the
// upstream's own id (DESIGN §4): clients key behaviour on it — Claude Code keeps signed thinking blocks only on
// assistant turns of the model it is calling, and drops them (a 400 on the next turn) when the id differs. The
// upstream's own id is kept for providerMetadata.gateway.upstreamModel and the x-mg-upstream-model header.
//
// Streams are the hot path: only the events that carry `model` are touched. A chat chunk carries it on every chunk,
// so its value is found and spliced as text (no parse, no re-serialisation), as is a Gemini event's `modelVersion`;
// Messages' message_start and the Responses events that carry the whole response are a few per stream and are parsed.
// Translators leave the upstream's id in place (a Gemini client's answer names it in modelVersion): naming happens
// here, once, so the upstream's id is known whichever protocol the client speaks.
import type { SseEvent } from "./sse/parse.ts";

/** The client protocols whose answers name a model. */
export type NamedProtocol = "chat" | "messages" | "responses" | "gemini";

/** The field of an answer (and of a stream event) that names the model: Gemini calls it modelVersion. */
const fieldOf = (protocol: NamedProtocol) => (protocol === "gemini" ? "modelVersion" : "model");

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * A JSON answer (chat completion, message, response object, Gemini response): its `model` (Gemini: `modelVersion`)
 * becomes the gateway id. Returns the upstream's own id it replaced, when the answer named one.
 */
export function nameJsonModel(body: unknown, gatewayId: string, protocol: NamedProtocol = "chat"): string | undefined {
  if (!isObject(body) || isObject(body.error)) return undefined;
  const field = fieldOf(protocol);
  const own = body[field];
  body[field] = gatewayId;
  return typeof own === "string" && own !== "" && own !== gatewayId ? own : undefined;
}

/** Events of the Responses API whose `response` is the whole response object. */
const CARRIES_RESPONSE = new Set(["response.created", "response.queued", "response.in_progress", "response.completed", "response.incomplete", "response.failed"]);
const TYPE = /^\{\s*"type"\s*:\s*"([^"]+)"/;
const MODEL_KEY = '"model"';
const MODEL_VERSION_KEY = '"modelVersion"';

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
    if (this.protocol === "gemini") return this.geminiEvent(ev);
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
      return end === -1 ? ev : this.splice(ev, i, end);
    }
    return ev;
  }

  /**
   * A Gemini event's top-level `"modelVersion":"x"` spliced as text. Unlike a chat chunk's, a Gemini event holds
   * free-form objects (a function call's args, before modelVersion), whose keys are not escaped: only the key of
   * the event's own object counts. Gemini and the gateway's translators put modelVersion near the end, after the
   * candidates: its last occurrence is checked from there (topLevelFromEnd), and the whole event is walked only
   * when that one is not the event's own.
   */
  private geminiEvent(ev: SseEvent): SseEvent {
    const d = ev.data;
    const last = d.lastIndexOf(MODEL_VERSION_KEY);
    if (last === -1) return ev; // no key of that name anywhere
    const value = topLevelFromEnd(d, last);
    if (value !== undefined) return value === -1 ? ev : this.splice(ev, value, stringEnd(d, value));
    return this.geminiEventScanned(ev);
  }

  /** geminiEvent by walking the event from its start: strings skipped, brackets counted. */
  private geminiEventScanned(ev: SseEvent): SseEvent {
    const d = ev.data;
    let depth = 0;
    for (let i = 0; i < d.length; i++) {
      const c = d.charCodeAt(i);
      if (c === 123 /* { */ || c === 91 /* [ */) depth++;
      else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
      else if (c === 34 /* " */) {
        const end = stringEnd(d, i);
        if (end === -1) return ev;
        if (depth === 1 && end - i === MODEL_VERSION_KEY.length && d.startsWith(MODEL_VERSION_KEY, i)) {
          const colon = skipSpace(d, end);
          if (d.charCodeAt(colon) === 58 /* : */) {
            const at = skipSpace(d, colon + 1);
            if (d.charCodeAt(at) !== 34) return ev; // null or not a string: nothing to name
            const valueEnd = stringEnd(d, at);
            return valueEnd === -1 ? ev : this.splice(ev, at, valueEnd);
          }
        }
        i = end - 1;
      }
    }
    return ev;
  }

  /** The event with the JSON string at [start, end) of its data replaced by the gateway id; the upstream's remembered. */
  private splice(ev: SseEvent, start: number, end: number): SseEvent {
    const d = ev.data;
    if (end - start === this.quoted.length && d.startsWith(this.quoted, start)) return ev;
    if (this.upstreamModel === undefined && end - start > 2) this.upstreamModel = safeParse(d.slice(start, end));
    const data = d.slice(0, start) + this.quoted + d.slice(end);
    return ev.event === undefined ? { data } : { event: ev.event, data };
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

/**
 * Whether the `"modelVersion"` at `at` is a key of the event's own object, judged by what follows it: its value (a
 * string: where it starts is returned; null or another value: -1), then only the object's other members up to its
 * closing brace, the last thing in the event. Undefined when that cannot be told so (a quote escaped before it, a key
 * nested deeper, anything unexpected): the caller walks the event instead. Within valid JSON an unescaped
 * `"modelVersion"` followed by `:` is a key, and a key whose object closes before the event's end is nested.
 */
function topLevelFromEnd(d: string, at: number): number | undefined {
  let slashes = 0;
  while (d.charCodeAt(at - 1 - slashes) === 92 /* \ */) slashes++;
  if (slashes % 2 === 1) return undefined;
  const colon = skipSpace(d, at + MODEL_VERSION_KEY.length);
  if (d.charCodeAt(colon) !== 58 /* : */) return undefined;
  const value = skipSpace(d, colon + 1);
  let i = value;
  if (d.charCodeAt(value) === 34 /* " */) {
    i = stringEnd(d, value);
    if (i === -1) return undefined;
  }
  // The rest of the event, from the value on: the object must close at the very end, never before.
  let depth = 1;
  for (; i < d.length; i++) {
    const c = d.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (--depth === 0) break;
    } else if (c === 34 /* " */) {
      const end = stringEnd(d, i);
      if (end === -1) return undefined;
      i = end - 1;
    }
  }
  if (depth !== 0 || skipSpace(d, i + 1) !== d.length) return undefined;
  return d.charCodeAt(value) === 34 ? value : -1;
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
