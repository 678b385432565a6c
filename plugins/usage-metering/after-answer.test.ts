// A stream the answer does not relay, after the answer: waited for while a plugin reads it, cancelled once nothing
// has read from it for the grace (none began, or its reader stopped pulling), at server.upstream_answer_timeout_ms
// after the request's end however it is read, or at once on a shutdown's cut.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { metered } from "./index.ts";
import { untilRead } from "./after-answer.ts";
import { UNREAD_GRACE_MS } from "./unread.ts";
import { RequestAbort } from "../../core/net/request-abort.ts";
import type { Meter } from "../../core/metering/meter.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

const meter = { relayed() {}, commit: () => Promise.resolve() } as unknown as Meter;

/** server.upstream_answer_timeout_ms of the test's config. */
const ANSWER_MS = 10_000;

/** A request answered with JSON by a plugin (the stream is not the answer), and what its log warned. */
function answered() {
  const abort = new RequestAbort();
  const warnings: string[] = [];
  const ctx = {
    requestId: "r", responseStarted: true, signal: abort.signal, config: { server: { upstreamAnswerTimeoutMs: ANSWER_MS } },
    response: { kind: "json", status: 202, body: {} },
    gateway: { log: { warn: (msg: string) => void warnings.push(msg) } },
  } as unknown as GatewayContext;
  return { ctx, abort, warnings };
}

/** An upstream stream of `n` events and [DONE], with whether it was let go (return()). */
function upstream(n: number) {
  const state = { returned: false };
  async function* events(): AsyncGenerator<SseEvent> {
    try {
      for (let i = 0; i < n; i++) yield { data: `e${i}` };
      yield { data: "[DONE]" };
    } finally {
      state.returned = true;
    }
  }
  return { events: events(), state };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("untilRead", () => {
  it("cancels a stream nothing began to read within the grace; a reader after that gets the error", async () => {
    const { ctx, warnings } = answered();
    const up = upstream(3);
    const stream = metered(up.events, meter, 200, ctx, true);
    let settled = false;
    void untilRead(ctx, stream)!.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(UNREAD_GRACE_MS - 1);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect(warnings).toEqual([expect.stringContaining("nothing read it")]);
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toThrow(/gateway cancelled this upstream stream/);
  });

  it("waits for a reader that keeps pulling, however long, and settles at its end", async () => {
    const { ctx } = answered();
    const stream = metered(upstream(3).events, meter, 200, ctx, true);
    let settled = false;
    void untilRead(ctx, stream)!.then(() => (settled = true));
    const it = stream[Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(UNREAD_GRACE_MS - 1); // a slow reader, one pull per grace
      expect((await it.next()).value?.data).toBe(`e${i}`);
    }
    expect(settled).toBe(false);
    expect((await it.next()).value?.data).toBe("[DONE]");
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    expect(stream.cancelled).toBeUndefined();
  });

  it("cancels a stream whose reader stopped pulling: its next pull gets the error, not a clean end", async () => {
    const { ctx } = answered();
    const up = upstream(3);
    const stream = metered(up.events, meter, 200, ctx, true);
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    let settled = false;
    void untilRead(ctx, stream)!.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(UNREAD_GRACE_MS);
    expect(settled).toBe(true);
    expect(up.state.returned).toBe(true);
    await expect(it.next()).rejects.toThrow(/gateway cancelled this upstream stream/);
  });

  it("on a shutdown's cut stops waiting at once and cancels the stream", async () => {
    const { ctx, abort } = answered();
    const stream = metered(upstream(3).events, meter, 200, ctx, true);
    let settled = false;
    void untilRead(ctx, stream)!.then(() => (settled = true));
    abort.abort(new Error("shutting down"));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    expect(stream.cancelled).toBeDefined();
  });

  it("does not wait for a stream the answer relays, nor for one read to its end", async () => {
    const { ctx } = answered();
    const relayed = metered(upstream(0).events, meter, 200, { ...ctx, response: { kind: "stream" } } as GatewayContext, true);
    relayed[Symbol.asyncIterator]();
    expect(untilRead({ ...ctx, response: { kind: "stream" } } as GatewayContext, relayed)).toBeUndefined();
    const done = metered(upstream(0).events, meter, 200, ctx, true);
    const it = done[Symbol.asyncIterator]();
    while (!(await it.next()).done);
    expect(untilRead(ctx, done)).toBeUndefined();
  });

  it("cuts a plugin still reading (one event per 1.5 s) server.upstream_answer_timeout_ms after the request's end: the record and the reservation are not held for ever", async () => {
    const { ctx, warnings } = answered();
    const up = upstream(1000);
    const stream = metered(up.events, meter, 200, ctx, true);
    let settled = false;
    void untilRead(ctx, stream)!.then(() => (settled = true));
    const it = stream[Symbol.asyncIterator]();
    let read = 0;
    for (let waited = 0; waited + 1500 < ANSWER_MS; waited += 1500) {
      await vi.advanceTimersByTimeAsync(1500);
      expect((await it.next()).value?.data).toBe(`e${read++}`);
    }
    expect(settled).toBe(false); // read within the grace every time: waited for
    await vi.advanceTimersByTimeAsync(1500);
    expect(settled).toBe(true);
    expect(up.state.returned).toBe(true);
    expect(warnings).toEqual([expect.stringContaining(`a plugin was still reading it ${ANSWER_MS} ms after the request's end`)]);
    await expect(it.next()).rejects.toThrow(`still being read ${ANSWER_MS} ms after the request's end (server.upstream_answer_timeout_ms)`);
  });

  it("a shutdown's cut of a stream a plugin is reading says so, not that nothing read it", async () => {
    const { ctx, abort, warnings } = answered();
    const stream = metered(upstream(3).events, meter, 200, ctx, true);
    void untilRead(ctx, stream);
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    abort.abort(new Error("shutting down"));
    await vi.advanceTimersByTimeAsync(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toMatch(/nothing read it/);
    expect(warnings[0]).toMatch(/when the gateway shut down/);
    await expect(it.next()).rejects.toThrow(/the gateway is shutting down/);
  });
});
