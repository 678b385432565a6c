import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { holdOpening, OPENING_HOLD_MS, type Opening } from "./opening-hold.ts";
import { answerStarted, armAnswerDeadline } from "../net/answer-deadline.ts";
import type { SseEvent } from "./parse.ts";
import { loopLag } from "../../test/helpers/loop-lag.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A relay stand-in: events as the test sends them; `content` ones begin the answer. */
function source() {
  const waiting: Array<(r: IteratorResult<SseEvent>) => void> = [];
  const ready: IteratorResult<SseEvent>[] = [];
  const opening: Opening = { begun: false };
  const put = (r: IteratorResult<SseEvent>) => {
    const w = waiting.shift();
    if (w) w(r);
    else ready.push(r);
  };
  const it: AsyncIterator<SseEvent> = {
    next: () => {
      const r = ready.shift();
      if (r) {
        if (!r.done && r.value.event === "content") opening.begun = true;
        return Promise.resolve(r);
      }
      return new Promise((resolve) => waiting.push((x) => {
        if (!x.done && x.value.event === "content") opening.begun = true;
        resolve(x);
      }));
    },
  };
  return { it, opening, send: (event: string) => put({ value: { event, data: "{}" }, done: false }), end: () => put({ value: undefined, done: true }) };
}

/** Arrival time (ms since start) of each event the consumer gets. */
async function arrivals(held: AsyncIterableIterator<SseEvent>, t0: number, n: number) {
  const out: Array<[string, number]> = [];
  for (let i = 0; i < n; i++) {
    const r = await held.next();
    if (r.done) break;
    out.push([r.value.event!, Date.now() - t0]);
  }
  return out;
}

describe("holdOpening", () => {
  it("opening events go out with the first content when it comes within the hold", async () => {
    const s = source();
    let firstEvent = 0;
    const held = holdOpening(s.it, s.opening, { reportFirstEvent: () => firstEvent++ });
    const t0 = Date.now();
    s.send("message_start");
    s.send("ping");
    setTimeout(() => s.send("content"), 200);
    const got = await arrivals(held, t0, 3);
    expect(got.map(([e]) => e)).toEqual(["message_start", "ping", "content"]);
    expect(got[0]![1]).toBeGreaterThanOrEqual(190); // held until the content
    expect(firstEvent).toBe(1);
  });

  it("without content, what was held goes out once the hold is over, and pings pass in real time from then on", async () => {
    const s = source();
    const held = holdOpening(s.it, s.opening, {});
    const lag = loopLag();
    const t0 = Date.now();
    s.send("message_start");
    const pings = setInterval(() => s.send("ping"), 300);
    const got = await arrivals(held, t0, 6);
    clearInterval(pings);
    expect(got[0]![0]).toBe("message_start");
    expect(got[0]![1]).toBeGreaterThanOrEqual(OPENING_HOLD_MS - 20);
    // Late by no more than a margin and what the loaded machine held the loop up meanwhile (a fixed 400 ms was not
    // always enough with test files side by side); a release a second late still fails on an idle machine.
    expect(got[0]![1]).toBeLessThan(OPENING_HOLD_MS + 100 + (await lag()));
    // the three pings held go with it; after the release, each ping arrives when sent (~300 ms apart)
    expect(got.map(([e]) => e)).toEqual(["message_start", "ping", "ping", "ping", "ping", "ping"]);
    expect(got[5]![1] - got[4]![1]).toBeGreaterThanOrEqual(200);
    expect(got[4]![1] - got[3]![1]).toBeGreaterThanOrEqual(100);
    await held.return!();
  });

  it("a relay that fails during the hold fails the first pull: nothing held goes out", async () => {
    const s = source();
    const it: AsyncIterator<SseEvent> = {
      next: async () => {
        const r = await s.it.next();
        if (r.done) throw new Error("empty stream");
        return r;
      },
    };
    const held = holdOpening(it, s.opening, {});
    s.send("message_start");
    s.end();
    await expect(held.next()).rejects.toThrow("empty stream");
  });

  it("the answer deadline lasts through the hold (pings do not end it) and past it until the answer begins", async () => {
    // Deadline shorter than the hold: the body is failed with the deadline's error before anything went out.
    const short = new PassThrough();
    short.on("error", () => {}); // a reader would see it
    armAnswerDeadline(short, 200, () => new Error("did not answer"), true);
    const s1 = source();
    const h1 = holdOpening(s1.it, s1.opening, {}, short);
    s1.send("message_start");
    answerStarted(short); // what a reader does on its first parsed event: no longer the end of the wait
    await sleep(300);
    expect(short.destroyed).toBe(true);
    expect(short.errored?.message).toBe("did not answer");
    void h1.return!();

    // Longer than the hold, and only pings after it: the held events went out, and the deadline still cuts the
    // stream (an upstream that opens and never answers cannot hold a client for ever).
    const pings = new PassThrough();
    pings.on("error", () => {});
    armAnswerDeadline(pings, OPENING_HOLD_MS + 300, () => new Error("did not answer"), true);
    const s2 = source();
    const h2 = holdOpening(s2.it, s2.opening, {}, pings);
    s2.send("message_start");
    expect((await h2.next()).value.event).toBe("message_start");
    s2.send("ping");
    expect((await h2.next()).value.event).toBe("ping");
    await sleep(500);
    expect(pings.destroyed).toBe(true);
    expect(pings.errored?.message).toBe("did not answer");
    void h2.return!();

    // The answer begins after the hold: the deadline is off from then on.
    const late = new PassThrough();
    armAnswerDeadline(late, OPENING_HOLD_MS + 300, () => new Error("did not answer"), true);
    const s3 = source();
    const h3 = holdOpening(s3.it, s3.opening, {}, late);
    s3.send("message_start");
    expect((await h3.next()).value.event).toBe("message_start");
    s3.send("content");
    expect((await h3.next()).value.event).toBe("content");
    await sleep(500);
    expect(late.destroyed).toBe(false);
    late.destroy();
    void h3.return!();
  });
});
