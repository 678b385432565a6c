// Gemini sends no end marker: after every candidate's finish reason the only thing left is the connection's end, and
// perhaps a usage-only chunk. An upstream that then stalls (its timeout_ms) or breaks off has already given the whole
// answer, so the stream ends as that end would (usage, then the client protocol's ending), billed as an ok answer and
// not counted against the endpoint's health: the answer was served. The request's own abort (the client left, a
// shutdown) is still the failure it was, and so is any failure before every candidate finished.
import type { SseEvent } from "../../core/sse/parse.ts";

/** `events` until its end, or until reading it fails once `answered()` says every candidate has finished. */
export async function* endAfterAnswer(events: AsyncIterable<SseEvent>, answered: () => boolean, signal: AbortSignal): AsyncGenerator<SseEvent> {
  const it = events[Symbol.asyncIterator]();
  let ended = false;
  try {
    for (;;) {
      let next: IteratorResult<SseEvent>;
      try {
        next = await it.next();
      } catch (err) {
        ended = true; // a failed read has ended the upstream's iterator
        if (!signal.aborted && answered()) return;
        throw err;
      }
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // The reader stopped early (the client left): the upstream's stream is closed as a for-await would close it.
    if (!ended) await it.return?.();
  }
}
