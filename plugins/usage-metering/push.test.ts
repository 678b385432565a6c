// metered() pushed (core/sse/push.ts): the ledger commit still comes before the terminal event, the source is
// held meanwhile, and the end follows the terminal event — even when another pause (the writer's) is lifted
// during the commit.
import { describe, expect, it } from "vitest";
import { metered } from "./index.ts";
import { canPush, PUSH, WRITE_HOLD, type EventSink, type PushableIterator, type WriteHold } from "../../core/sse/push.ts";
import { FakeSource } from "../../core/sse/push.testkit.ts";
import type { Meter } from "../../core/metering/meter.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

/** As the writer does: its hold, here logging. */
function offerHold(it: AsyncIterator<unknown>, log: string[]): void {
  (it as unknown as { [WRITE_HOLD](h: WriteHold): void })[WRITE_HOLD]({ hold: () => void log.push("hold"), release: () => void log.push("release") });
}

function setup() {
  const log: string[] = [];
  let release!: () => void;
  const meter = {
    events: 0,
    relayed(this: { events: number }) { this.events++; },
    commit: () => {
      log.push("commit");
      return new Promise<void>((r) => (release = () => { log.push("committed"); r(); }));
    },
  } as unknown as Meter;
  const src = new FakeSource();
  const it = metered(src, meter, 200)[Symbol.asyncIterator]();
  const sink: EventSink = { onEvent: (ev) => void log.push(ev.data), onEnd: () => void log.push("end"), onError: (e) => void log.push(`error ${e}`) };
  offerHold(it, log);
  expect(canPush(it)).toBe(true);
  const control = (it as PushableIterator)[PUSH](sink);
  return { log, src, meter, control, release: () => release() };
}

describe("metered, pushed", () => {
  it("counts content events and commits the ledger before the terminal event reaches the client", async () => {
    const { log, src, meter, release } = setup();
    src.sink!.onEvent({ data: "a" });
    src.sink!.onEvent({ data: "b" });
    src.sink!.onEvent({ data: "[DONE]" });
    // The writer is held too: "a" and "b", not yet written, leave with "[DONE]" once the ledger has committed.
    expect(log).toEqual(["a", "b", "hold", "commit"]);
    expect(src.paused).toBe(1);
    release();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(["a", "b", "hold", "commit", "committed", "[DONE]", "release"]);
    expect(src.paused).toBe(0);
    src.sink!.onEnd();
    expect(log.at(-1)).toBe("end");
    expect((meter as unknown as { events: number }).events).toBe(2); // the fake counts the events handed to relayed()
  });

  it("an end that arrives while the terminal event waits for the ledger comes after it", async () => {
    const { log, src, release } = setup();
    src.sink!.onEvent({ event: "message_stop", data: "{}" });
    src.sink!.onEnd();
    expect(log).toEqual(["hold", "commit"]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(["hold", "commit", "committed", "{}", "release", "end"]);
  });

  it("a stream that ends without a terminal event is committed before its end", async () => {
    const { log, src, release } = setup();
    src.sink!.onEvent({ data: "a" });
    src.sink!.onEnd();
    expect(log).toEqual(["a", "commit"]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(["a", "commit", "committed", "end"]);
  });

  it("a ledger commit that fails releases the writer and ends the stream with the error, not the terminal event", async () => {
    const log: string[] = [];
    const meter = { events: 0, relayed(this: { events: number }) { this.events++; }, commit: () => Promise.reject(new Error("disk full")) } as unknown as Meter;
    const src = new FakeSource();
    const it = metered(src, meter, 200)[Symbol.asyncIterator]();
    offerHold(it, log);
    (it as PushableIterator)[PUSH]({
      onEvent: (ev) => void log.push(ev.data), onEnd: () => void log.push("end"), onError: (e) => void log.push(`error ${(e as Error).message}`),
    });
    src.sink!.onEvent({ data: "a" });
    src.sink!.onEvent({ data: "[DONE]" });
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(["a", "hold", "release", "error disk full"]);
    expect(src.cancelled).toBe(1);
  });

  it("a source that fails is recorded as a stream error before the error reaches the writer, which is held meanwhile", async () => {
    const log: string[] = [];
    let release!: () => void;
    const outcomes: unknown[] = [];
    const meter = {
      events: 0, relayed(this: { events: number }) { this.events++; },
      commit: (o: unknown) => {
        outcomes.push(o);
        log.push("commit");
        return new Promise<void>((r) => (release = r));
      },
    } as unknown as Meter;
    const src = new FakeSource();
    const it = metered(src, meter, 200, { responseStarted: true, signal: new AbortController().signal } as GatewayContext)[Symbol.asyncIterator]();
    offerHold(it, log);
    (it as PushableIterator)[PUSH]({ onEvent: (ev) => void log.push(ev.data), onEnd: () => void log.push("end"), onError: (e) => void log.push(`error ${(e as Error).message}`) });
    src.sink!.onEvent({ data: "a" });
    src.sink!.onError(new Error("upstream reset"));
    expect(log).toEqual(["a", "hold", "commit"]);
    expect(outcomes).toEqual([expect.objectContaining({ status: 200, aborted: false, streamError: expect.objectContaining({ code: "INTERNAL", cause: expect.objectContaining({ message: "upstream reset" }) }) })]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(["a", "hold", "commit", "release", "error upstream reset"]);
  });

  it("a source that fails because the client left is passed on at once, and recorded when the request ends", () => {
    const log: string[] = [];
    const meter = { commit: () => void log.push("commit") } as unknown as Meter;
    const client = new AbortController();
    const src = new FakeSource();
    const it = metered(src, meter, 200, { responseStarted: true, signal: client.signal } as GatewayContext)[Symbol.asyncIterator]();
    (it as PushableIterator)[PUSH]({ onEvent: () => {}, onEnd: () => {}, onError: (e) => void log.push(`error ${(e as Error).message}`) });
    client.abort();
    src.sink!.onError(new Error("aborted"));
    expect(log).toEqual(["error aborted"]);
  });
});
