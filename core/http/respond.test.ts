// writeResponse's stream relay against a real socket: a write the socket cannot take at once must not leave the
// relay waiting for a 'drain' that already fired (the shipped-default hang), and a client that stops reading must
// still stop the relay from pulling (back-pressure).
import { describe, expect, it } from "vitest";
import { request, type IncomingMessage } from "node:http";
import { closeServer, serveCountingFlushes, servePerTest } from "./respond.testkit.ts";
import { WRITE_HOLD, type WriteHold } from "../sse/push.ts";
import type { SseEvent } from "../sse/parse.ts";

const serve = servePerTest();

const big = (i: number) => ({ data: JSON.stringify({ i, text: "x".repeat(20 * 1024) }) });

describe("writeResponse (streams)", () => {
  it("ends after a burst larger than the socket's high-water mark followed by an event one macrotask later (SQLite commit before [DONE])", async () => {
    async function* events(): AsyncGenerator<SseEvent> {
      yield big(0); // one write of > 16 KiB: write() returns false, and the socket drains before the next event
      await new Promise((r) => setImmediate(r));
      yield { data: "[DONE]" };
    }
    const { url, outcome } = await serve(events());
    const hung = new Promise<string>((r) => setTimeout(() => r("hung"), 5000).unref());
    const body = await Promise.race([fetch(url).then((res) => res.text()), hung]);
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(await Promise.race([outcome, hung])).toEqual({ status: 200, aborted: false });
  });

  it("stops pulling events while the client does not read, and delivers all of them once it does", async () => {
    const total = 400; // 8 MiB: far more than the socket buffers of both ends hold
    let pulled = 0;
    async function* events(): AsyncGenerator<SseEvent> {
      for (let i = 0; i < total; i++) {
        pulled++;
        yield big(i);
        await new Promise((r) => setImmediate(r));
      }
      yield { data: "[DONE]" };
    }
    const { url, outcome } = await serve(events());
    const res = await new Promise<IncomingMessage>((r) => request(url, r).end());
    res.pause();
    // Wait until the relay stops pulling (the buffers are full), then check it stopped well before the end.
    let last = -1;
    while (pulled !== last) {
      last = pulled;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pulled).toBeLessThan(total);
    let bytes = 0;
    let tail = "";
    res.on("data", (d: Buffer) => { bytes += d.length; tail = (tail + d.toString()).slice(-32); });
    res.resume();
    await new Promise((r) => res.on("end", r));
    expect(tail.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(bytes).toBeGreaterThan(total * 20 * 1024);
    expect(await outcome).toEqual({ status: 200, aborted: false });
  });
});

/** Pulled, like usage metering: holds the writer while the terminal event waits for a commit (one macrotask). */
class HoldingSource implements AsyncIterator<SseEvent> {
  private i = 0;
  hold: WriteHold | undefined;
  [Symbol.asyncIterator]() {
    return this;
  }
  [WRITE_HOLD](h: WriteHold): void {
    this.hold = h;
  }
  async next(): Promise<IteratorResult<SseEvent>> {
    const i = this.i++;
    if (i < 3) return { value: { data: `e${i}` }, done: false };
    if (i > 3) return { value: undefined, done: true };
    this.hold!.hold();
    await new Promise((r) => setImmediate(r));
    this.hold!.release();
    return { value: { data: "[DONE]" }, done: false };
  }
}

describe("writeResponse (streams), pulled, with the writer held", () => {
  it("offers the iterator a hold; what was encoded before it leaves with the terminal event and the end, in one write", async () => {
    const src = new HoldingSource();
    const { server, url, outcome, flushes } = await serveCountingFlushes({ [Symbol.asyncIterator]: () => src });
    try {
      const body = await fetch(url).then((res) => res.text());
      expect(body).toBe("data: e0\n\ndata: e1\n\ndata: e2\n\ndata: [DONE]\n\n");
      expect(src.hold).toBeDefined();
      expect(flushes).toHaveLength(1);
      expect(flushes[0]).toMatch(/data: e0[^]*data: \[DONE\]\n\n\r\n0\r\n\r\n$/);
      expect(await outcome).toEqual({ status: 200, aborted: false });
    } finally {
      await closeServer(server);
    }
  });
});
