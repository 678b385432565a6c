// What the upstream had already sent when the guardrails stop a stream. An upstream that writes its whole answer at
// once has its usage (Anthropic's message_delta, Gemini's last usageMetadata) in the same read as the text a block
// rule caught: taken now, the ledger bills that, as it bills the same stream without the rule, not an estimate of the
// text before the match. Only what comes without waiting on the network is taken: the refusal is never held for a
// slow upstream.
import type { SseEvent } from "../../../core/sse/parse.ts";

const NOT_YET = Symbol("not arrived yet");

export interface Arrived {
  /** The upstream's stream ended (or its terminal event came) among them: the usage it reported is its last word. */
  complete: boolean;
  /** The upstream's iterator ended or failed: nothing is left to stop. */
  over: boolean;
}

/**
 * Pull `it` for as long as its events are already at hand (`take` each), until its end or an event `isTerminal`.
 * A pull still waiting on the upstream when the drain stops is left pending: the caller cuts its call
 * (core/upstream-stop.ts).
 */
export async function takeArrived(it: AsyncIterator<SseEvent>, isTerminal: (ev: SseEvent) => boolean, take: (ev: SseEvent) => void): Promise<Arrived> {
  // One turn of the event loop: events an upstream read already holds come through promise jobs alone, before it.
  const turn = new Promise<typeof NOT_YET>((resolve) => setImmediate(resolve, NOT_YET));
  for (;;) {
    let step: IteratorResult<SseEvent> | typeof NOT_YET;
    try {
      step = await Promise.race([it.next(), turn]);
    } catch {
      // The upstream failed after the refusal: the client gets the refusal, not that.
      return { complete: false, over: true };
    }
    if (step === NOT_YET) return { complete: false, over: false };
    if (step.done) return { complete: true, over: true };
    take(step.value);
    if (isTerminal(step.value)) return { complete: true, over: false };
  }
}
