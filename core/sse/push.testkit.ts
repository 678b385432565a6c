// For tests of pushed streams (core/sse/push.ts): a source the test drives by hand.
import { PUSH, WRITE_HOLD, type EventSink, type PushControl, type WriteHold } from "./push.ts";
import type { SseEvent } from "./parse.ts";

/** A source the test drives: the first event pulled, the rest pushed; counts pulls, pauses and cancels, and keeps the
 * writer's hold. */
export class FakeSource implements AsyncIterableIterator<SseEvent>, PushControl {
  pulls = 0;
  paused = 0;
  pauses = 0;
  cancelled = 0;
  sink: EventSink | undefined;
  /** The writer's hold, as the writer offers it. */
  writeHold: WriteHold | undefined;
  [WRITE_HOLD](h: WriteHold) {
    this.writeHold = h;
  }
  [Symbol.asyncIterator]() {
    return this;
  }
  async next(): Promise<IteratorResult<SseEvent>> {
    this.pulls++;
    if (this.pulls === 1) return { value: { data: '{"first":true}' }, done: false };
    throw new Error("pulled after the switch to push");
  }
  async return(): Promise<IteratorResult<SseEvent>> {
    return { value: undefined, done: true };
  }
  [PUSH](sink: EventSink): PushControl {
    this.sink = sink;
    return this;
  }
  pause() {
    this.paused++;
    this.pauses++;
  }
  resume() {
    this.paused--;
  }
  cancel() {
    this.cancelled++;
  }
}
