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

/** About how much room a kept body takes: JSON as text, bytes as base64, events as recordStream counts them. */
export function storedSize(stored: StoredResponse): number {
  if (stored.kind === "json") return JSON.stringify(stored.body ?? null).length;
  if (stored.kind === "bytes") return stored.base64.length;
  let n = 0;
  for (const ev of stored.events) n += eventSize(ev);
  return n;
}

const eventSize = (ev: SseEvent) => ev.data.length + (ev.event?.length ?? 0) + 16;

export interface StreamRecording {
  /** The stream ended normally: its events (awaited before the stream ends to the client), or undefined past maxBytes. */
  done(events: SseEvent[] | undefined): Promise<void> | void;
  /** It did not (an error, or the client left): nothing was kept. */
  failed(): Promise<void> | void;
  /** Stop keeping events once their text passes this many bytes (the stream itself goes on). Default: no limit. */
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
      if (seen) {
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
