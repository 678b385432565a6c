// An upstream stream's events grouped by the read they came in. A relay notes the usage of a whole read before it
// hands on the read's first event (as the OpenAI relay does, openai-compatible/stream.ts), so a consumer that stops
// early — a guardrail's block refusing the answer — leaves the meter holding what the upstream had already reported
// in the bytes taken, without anything more being pulled from the stream.
import { SseParser, eventLimitOf, type SseEvent } from "../core/sse/parse.ts";
import { answerStarted } from "../core/net/answer-deadline.ts";

/** The events of each read of `body` (reads that complete no event are skipped). */
export async function* sseReads(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent[]> {
  const parser = new SseParser(eventLimitOf(body));
  let started = false;
  for await (const chunk of body) {
    const events = parser.push(chunk);
    if (!events.length) continue;
    // The first event (comments are not one) ends the wait for the answer to start (core/net/answer-deadline.ts).
    if (!started) {
      started = true;
      answerStarted(body);
    }
    yield events;
  }
}
