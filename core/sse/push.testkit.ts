// For tests of pushed streams (core/sse/push.ts): a source the test drives by hand.
import { PUSH, type EventSink, type PushControl } from "./push.ts";
import type { SseEvent } from "./parse.ts";

/** A source the test drives: the first event pulled, the rest pushed; counts pulls, pauses and cancels. */
export class FakeSource implements AsyncIterableIterator<SseEvent>, PushControl {
  pulls = 0;
  paused = 0;
  pauses = 0;
  cancelled = 0;
  sink: EventSink | undefined;
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
