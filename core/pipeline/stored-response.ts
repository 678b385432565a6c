// A response kept for later (StoredResponse: an idempotency record, a cached answer) and played back: the one replay
// path of the gateway. A JSON or byte answer is kept as it is; a stream is recorded as it passes to the client and
// kept only once it has ended normally, and replays as the same events in the same order.
import type { GatewayResponse } from "./context.ts";
import type { SseEvent } from "../sse/parse.ts";
import type { StoredResponse } from "../store/types.ts";

/** The response to send for a stored one (its headers are the caller's to add). */
export function replayStored(stored: StoredResponse): GatewayResponse {
  if (stored.kind === "json") return { kind: "json", status: stored.status, body: stored.body };
  if (stored.kind === "bytes") return { kind: "bytes", status: stored.status, contentType: stored.contentType, body: Buffer.from(stored.base64, "base64") };
  const events = stored.events;
  return { kind: "stream", status: stored.status, events: (async function* () { yield* events; })(), stored: true };
}

/** A JSON or byte response as kept; undefined for a stream (record it with recordStream) or a passed-through web response. */
export function storedOf(r: GatewayResponse, headers: Record<string, string>): StoredResponse | undefined {
  if (r.kind === "json") return { kind: "json", status: r.status, headers, body: r.body };
  if (r.kind === "bytes") return { kind: "bytes", status: r.status, headers, contentType: r.contentType, base64: Buffer.from(r.body).toString("base64") };
  return undefined;
}

/**
 * The bytes `text` takes where answers are kept: UTF-8, as every store writes it (a CJK character is 3 bytes, not
 * one, as a string's length would count it). Every limit on kept answers (idempotency records, the response cache)
 * measures with it.
 */
export const storedBytes = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * The room a kept answer takes: the UTF-8 bytes of its JSON text, as the store keeps it — headers included, a byte
 * answer as the base64 inside it (about 4/3 of its size), a stream as its events.
 */
export function storedSize(stored: StoredResponse): number {
  return storedBytes(JSON.stringify(stored));
}

/** An event's bytes as recordStream counts them while it records (its JSON escaping aside): bounds what it holds. */
const eventSize = (ev: SseEvent) => storedBytes(ev.data) + (ev.event === undefined ? 0 : storedBytes(ev.event)) + 16;

export interface StreamRecording {
  /** The stream ended normally: its events (awaited before the stream ends to the client), or undefined past maxBytes. */
  done(events: SseEvent[] | undefined): Promise<void> | void;
  /** It did not (an error, or the client left): nothing was kept. */
  failed(): Promise<void> | void;
  /** Stop keeping events once their text passes this many (UTF-8) bytes (the stream itself goes on). Default: no limit. */
  maxBytes?: number;
}

/** `events` as they pass, recorded. */
export async function* recordStream(events: AsyncIterable<SseEvent>, rec: StreamRecording): AsyncGenerator<SseEvent> {
  let seen: SseEvent[] | undefined = [];
  let bytes = 0;
  const max = rec.maxBytes ?? Infinity;
  let complete = false;
  try {
    for await (const ev of events) {
      if (seen && ev.comment === undefined) { // a keep-alive is not part of the answer
        bytes += eventSize(ev);
        if (bytes > max) seen = undefined;
        else seen.push(ev.event === undefined ? { data: ev.data } : { event: ev.event, data: ev.data });
      }
      yield ev;
    }
    complete = true;
    await rec.done(seen);
  } finally {
    if (!complete) await rec.failed();
  }
}
