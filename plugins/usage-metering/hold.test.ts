// metered() pulled: the writer's hold (core/sse/push.ts WRITE_HOLD) is taken before the ledger commit that precedes the
// terminal event and released after it, so the frames the writer has not written yet leave with that event.
import { describe, expect, it } from "vitest";
import { metered } from "./index.ts";
import { WRITE_HOLD, type WriteHold } from "../../core/sse/push.ts";
import type { Meter } from "../../core/metering/meter.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

/** The request as the metering sees it: whether the writer has started the response, and the client's signal. */
const request = (responseStarted: boolean, signal = new AbortController().signal) => ({ responseStarted, signal }) as GatewayContext;

async function* source(): AsyncGenerator<SseEvent> {
  yield { data: "a" };
  yield { data: "[DONE]" };
}

function setup(commit: () => Promise<void>) {
  const log: string[] = [];
  const meter = { events: 0, relayed(this: { events: number }) { this.events++; }, commit: () => { log.push("commit"); return commit(); } } as unknown as Meter;
  const it = metered(source(), meter, 200)[Symbol.asyncIterator]() as AsyncIterator<SseEvent> & { [WRITE_HOLD](h: WriteHold): void };
  it[WRITE_HOLD]({ hold: () => void log.push("hold"), release: () => void log.push("release") });
  return { log, it };
}

describe("metered, pulled, with the writer's hold", () => {
  it("holds the writer through the ledger commit before the terminal event, then releases it", async () => {
    const { log, it } = setup(() => Promise.resolve().then(() => void log.push("committed")));
    expect((await it.next()).value?.data).toBe("a");
    expect(log).toEqual([]);
    expect((await it.next()).value?.data).toBe("[DONE]");
    expect(log).toEqual(["hold", "commit", "committed", "release"]);
    expect((await it.next()).done).toBe(true);
    expect(log).toEqual(["hold", "commit", "committed", "release"]);
  });

  it("releases the writer when the commit fails, and the terminal event never comes", async () => {
    const { log, it } = setup(() => Promise.reject(new Error("disk full")));
    await it.next();
    await expect(it.next()).rejects.toThrow("disk full");
    expect(log).toEqual(["hold", "commit", "release"]);
  });

  it("records a source that fails as a stream error before the error reaches the writer", async () => {
    const log: string[] = [];
    const outcomes: unknown[] = [];
    const meter = { relayed() {}, commit: (o: unknown) => { outcomes.push(o); log.push("commit"); return Promise.resolve(); } } as unknown as Meter;
    async function* failing(): AsyncGenerator<SseEvent> {
      yield { data: "a" };
      throw new Error("upstream reset");
    }
    const it = metered(failing(), meter, 200, request(true))[Symbol.asyncIterator]();
    await it.next();
    await expect(it.next()).rejects.toThrow("upstream reset");
    expect(log).toEqual(["commit"]);
    expect(outcomes).toEqual([expect.objectContaining({ aborted: false, streamError: expect.objectContaining({ code: "INTERNAL", cause: expect.objectContaining({ message: "upstream reset" }) }) })]);
  });

  it("leaves a source that fails before the response started to the writer's plain error response (no record yet)", async () => {
    const log: string[] = [];
    const meter = { relayed() {}, commit: () => { log.push("commit"); return Promise.resolve(); } } as unknown as Meter;
    async function* heldBack(): AsyncGenerator<SseEvent> {
      yield { data: "a" }; // passed on, but held back by a translator outside: the writer has sent nothing yet
      throw new Error("failed before the response started");
    }
    const it = metered(heldBack(), meter, 200, request(false))[Symbol.asyncIterator]();
    await it.next();
    await expect(it.next()).rejects.toThrow("failed before the response started");
    expect(log).toEqual([]);
  });
});
