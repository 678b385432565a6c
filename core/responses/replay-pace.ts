// A stored response's replay (replay-events.ts) handed to the stream writer (core/http/respond.ts) with turns of the
// event loop between its events. The writer flushes what it collected on the next tick and checks back-pressure and
// a client that left before it asks for more; a source that never waits on I/O would be read whole on microtasks
// first, the whole stream built in memory and written after the client had gone. A turn every PACE_CHARS of events
// lets each flush go out, the writer wait for the socket to drain, and a closed connection end the replay.
import { setImmediate as nextTurn } from "node:timers/promises";
import type { SseEvent } from "../sse/parse.ts";

/** How much event text goes to the writer between turns of the event loop. */
export const PACE_CHARS = 64 * 1024;

export async function* paced(events: Iterable<SseEvent>, paceChars = PACE_CHARS): AsyncGenerator<SseEvent> {
  let since = 0;
  for (const event of events) {
    yield event;
    since += event.data.length;
    if (since >= paceChars) {
      since = 0;
      await nextTurn();
    }
  }
}
