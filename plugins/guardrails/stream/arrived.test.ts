import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { takeArrived } from "./arrived.ts";

/** Events at hand, then (unless `ends`) a pull that waits until `release` is called. */
function source(events: string[], ends: boolean) {
  let release = () => {};
  const later = new Promise<IteratorResult<SseEvent>>((r) => (release = () => r({ done: true, value: undefined })));
  let i = 0;
  const it: AsyncIterator<SseEvent> = {
    next: async () => (i < events.length ? { done: false, value: { data: events[i++]! } } : ends ? { done: true, value: undefined } : later),
  };
  return { it, release };
}

const none = () => false;

describe("takeArrived", () => {
  it("takes every event already at hand and says the stream is complete at its end", async () => {
    const taken: string[] = [];
    const { it } = source(["a", "b", "c"], true);
    expect(await takeArrived(it, none, (ev) => taken.push(ev.data))).toEqual({ complete: true, over: true });
    expect(taken).toEqual(["a", "b", "c"]);
  });

  it("stops at the terminal event, complete, the iterator still to be stopped", async () => {
    const taken: string[] = [];
    const { it } = source(["a", "[DONE]", "after"], true);
    expect(await takeArrived(it, (ev) => ev.data === "[DONE]", (ev) => taken.push(ev.data))).toEqual({ complete: true, over: false });
    expect(taken).toEqual(["a", "[DONE]"]);
  });

  it("does not wait for an upstream that has sent nothing more", async () => {
    const taken: string[] = [];
    const { it, release } = source(["a"], false);
    // Were it waited for, this would never settle: the source is released only afterwards.
    expect(await takeArrived(it, none, (ev) => taken.push(ev.data))).toEqual({ complete: false, over: false });
    expect(taken).toEqual(["a"]);
    release();
  });

  it("an upstream that fails meanwhile is over, not complete", async () => {
    const it: AsyncIterator<SseEvent> = { next: () => Promise.reject(new Error("reset")) };
    expect(await takeArrived(it, none, () => {})).toEqual({ complete: false, over: true });
  });
});
