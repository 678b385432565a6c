// The push form of a stream's events (issue 11: memory per slow stream). Pulling through `AsyncIterator.next()`
// parks a promise chain per layer (writer -> metering -> dispatch -> relay -> body iterator) for the whole gap
// between frames; with thousands of slow streams those promises outlive two scavenges and are promoted, and the old
// generation saws up by hundreds of MB. Pushed, a frame runs from the upstream socket's 'data' to `res.write` in
// one call stack and nothing is left waiting between frames.
//
// An events iterator may offer push as well as pull: `canPush(it)` says whether the whole chain below it can push
// right now (each wrapper asks the one it wraps; a wrapper with an event of its own still to hand out says no),
// then `it[PUSH](sink)` switches it for good. Everything else keeps the AsyncIterable contract.
import type { SseEvent } from "./parse.ts";

export const PUSH = Symbol("model-gateway.sse.push");
export const CAN_PUSH = Symbol("model-gateway.sse.can-push");

/** Where pushed events go. Called asynchronously only (never from inside `[PUSH]` itself). */
export interface EventSink {
  onEvent(ev: SseEvent): void;
  /** The stream ended normally (after its last event). */
  onEnd(): void;
  /** The stream failed; no more calls follow. */
  onError(err: unknown): void;
}

/**
 * Optional on an events iterator, pulled or pushed: the writer hands it a hold at the start (`it[WRITE_HOLD](h)`).
 * Between `hold()` and `release()` the events it has been given stay in memory, then leave with what follows. Usage
 * metering holds the writer while the ledger commits before the terminal event, so the frames of the read that
 * carried it go out with it and the end in one write, not two (a loopback write costs the sender tens of µs: it
 * runs the receiver's TCP input too).
 */
export const WRITE_HOLD = Symbol("model-gateway.sse.write-hold");

export interface WriteHold {
  hold(): void;
  release(): void;
}

/** Handed back by `[PUSH]`: back-pressure, and the consumer leaving. */
export interface PushControl {
  /** No onEvent/onEnd/onError until resume() (events already read are held, in order). */
  pause(): void;
  resume(): void;
  /** The consumer is gone: stop the source quietly (no onError), like AsyncIterator.return(). */
  cancel(): void;
}

export interface PushableIterator extends AsyncIterator<SseEvent> {
  [PUSH](sink: EventSink): PushControl;
  /** Whether push may start now (defaults to true when absent). */
  [CAN_PUSH]?(): boolean;
}

/** True when `it` and everything below it can switch to push now. */
export function canPush(it: AsyncIterator<SseEvent> | undefined): it is PushableIterator {
  const p = it as Partial<PushableIterator> | undefined;
  return typeof p?.[PUSH] === "function" && (p[CAN_PUSH] ? p[CAN_PUSH]() : true);
}
