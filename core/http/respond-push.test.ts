// writeResponse with a chain that can push (core/sse/push.ts): after the first event (pulled, with the headers)
// the rest is pushed — back-pressure pauses the source, a client that leaves cancels it, a failure is the
// protocol's in-band error event. Against a real socket.
import { describe, expect, it } from "vitest";
import { request, type IncomingMessage } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { closeServer, serveCountingFlushes, serveEvents, servePerTest } from "./respond.testkit.ts";
import { GatewayError } from "../errors.ts";
import { FakeSource } from "../sse/push.testkit.ts";
import { PUSH, type EventSink, type PushControl } from "../sse/push.ts";
import type { SseEvent } from "../sse/parse.ts";

const serve = servePerTest();

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

/** GET the stream, collect its text, and wait until the writer has taken over the source (the first event pulled). */
async function readPushed(url: string, src: FakeSource): Promise<{ res: IncomingMessage; text: () => string }> {
  const res = await new Promise<IncomingMessage>((r) => request(url, r).end());
  let text = "";
  res.on("data", (d: Buffer) => (text += d.toString()));
  await until(() => src.sink !== undefined);
  return { res, text: () => text };
}

describe("writeResponse, pushed", () => {
  it("pulls only the first event, then writes what is pushed, and ends on the source's end", async () => {
    const src = new FakeSource();
    const { url, outcome } = await serve(src);
    const { res, text } = await readPushed(url, src);
    src.sink!.onEvent({ data: "a" });
    src.sink!.onEvent({ event: "named", data: "b" });
    await new Promise((r) => setTimeout(r, 10));
    src.sink!.onEvent({ data: "[DONE]" });
    src.sink!.onEnd();
    await new Promise((r) => res.on("end", r));
    expect(text()).toBe('data: {"first":true}\n\ndata: a\n\nevent: named\ndata: b\n\ndata: [DONE]\n\n');
    expect(src.pulls).toBe(1);
    expect(await outcome).toEqual({ status: 200, aborted: false });
  });

  it("pauses the source while the client does not read, resumes it on drain, and delivers everything", async () => {
    const src = new FakeSource();
    const { url, outcome } = await serve(src);
    const res = await new Promise<IncomingMessage>((r) => request(url, r).end());
    res.pause();
    await until(() => src.sink !== undefined);
    const big = "x".repeat(20 * 1024);
    let pushed = 0;
    // Push a 20 KiB event per macrotask while the source is not paused, until it has been paused for a while.
    while (pushed < 2000) {
      if (src.paused) break;
      src.sink!.onEvent({ data: big });
      pushed++;
      await new Promise((r) => setImmediate(r));
    }
    expect(src.paused).toBe(1);
    expect(pushed).toBeLessThan(2000);
    let bytes = 0;
    let tail = "";
    res.on("data", (d: Buffer) => { bytes += d.length; tail = (tail + d.toString()).slice(-32); });
    res.resume();
    await until(() => src.paused === 0);
    src.sink!.onEvent({ data: "[DONE]" });
    src.sink!.onEnd();
    await new Promise((r) => res.on("end", r));
    expect(bytes).toBeGreaterThan(pushed * 20 * 1024);
    expect(tail.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(await outcome).toEqual({ status: 200, aborted: false });
  });

  it("a client that hangs up cancels the source (the upstream is stopped) and the outcome is aborted", async () => {
    const src = new FakeSource();
    const { url, outcome } = await serve(src);
    const req = request(url);
    const res = await new Promise<IncomingMessage>((r) => req.on("response", r).end());
    res.resume();
    await until(() => src.sink !== undefined);
    src.sink!.onEvent({ data: "a" });
    req.destroy();
    expect(await outcome).toEqual({ status: 200, aborted: true });
    expect(src.cancelled).toBe(1);
  });

  it("a failure after the headers is the protocol's in-band error event", async () => {
    const src = new FakeSource();
    const { url, outcome } = await serve(src);
    const { res, text } = await readPushed(url, src);
    src.sink!.onEvent({ data: "a" });
    src.sink!.onError(new GatewayError(502, "UPSTREAM_ERROR", "Could not reach provider up: other side closed"));
    await new Promise((r) => res.on("end", r));
    const last = text().trim().split("\n\n").at(-1)!;
    expect(text().startsWith('data: {"first":true}\n\ndata: a\n\n')).toBe(true);
    expect(JSON.parse(last.slice("data: ".length))).toMatchObject({ error: { code: "UPSTREAM_ERROR" } });
    const o = await outcome;
    expect(o).toMatchObject({ status: 200, aborted: false });
    expect(o.streamError?.code).toBe("UPSTREAM_ERROR");
  });

  it("a source that throws as it switches to push ends the stream with the in-band error event", async () => {
    class BrokenSource extends FakeSource {
      override [PUSH](): PushControl {
        throw new GatewayError(502, "UPSTREAM_ERROR", "the upstream body is gone");
      }
    }
    const src = new BrokenSource();
    const { url, outcome } = await serve(src);
    const res = await new Promise<IncomingMessage>((r) => request(url, r).end());
    let text = "";
    res.on("data", (d: Buffer) => (text += d.toString()));
    await new Promise((r) => res.on("end", r));
    expect(text.startsWith('data: {"first":true}\n\n')).toBe(true);
    const last = text.trim().split("\n\n").at(-1)!;
    expect(JSON.parse(last.slice("data: ".length))).toMatchObject({ error: { code: "UPSTREAM_ERROR" } });
    expect((await outcome).streamError?.code).toBe("UPSTREAM_ERROR");
  });

  it("keeps no hold of the first event once pushing (a slow stream would carry it, and its read, to the end)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let first: WeakRef<SseEvent> | undefined;
    class TrackedSource extends FakeSource {
      override async next(): Promise<IteratorResult<SseEvent>> {
        this.pulls++;
        const ev = { data: JSON.stringify({ first: "x".repeat(64) }) };
        first = new WeakRef(ev);
        return { value: ev, done: false };
      }
    }
    const src = new TrackedSource();
    const { url, outcome } = await serve(src);
    const { res, text } = await readPushed(url, src);
    await until(() => text().includes("first"));
    await new Promise((r) => setTimeout(r, 10)); // a WeakRef's target lives at least to the end of its job
    gc();
    expect(first!.deref()).toBeUndefined();
    src.sink!.onEvent({ data: "[DONE]" });
    src.sink!.onEnd();
    await new Promise((r) => res.on("end", r));
    expect(await outcome).toEqual({ status: 200, aborted: false });
  });
});

/** Like the upstream relay: events left over from the read that carried the first are handed out on the next tick. */
class SourceWithLeftovers extends FakeSource {
  override [PUSH](sink: EventSink): PushControl {
    process.nextTick(() => {
      sink.onEvent({ data: "a" });
      sink.onEvent({ data: "b" });
    });
    return super[PUSH](sink);
  }
}

describe("writeResponse, pushed: writes per stream", () => {
  it("the first event goes out with the events the source still held from its read: one write", async () => {
    const src = new SourceWithLeftovers();
    const { server, url, outcome, flushes } = await serveCountingFlushes(src);
    try {
      const { res, text } = await readPushed(url, src);
      await until(() => text().includes("data: b"));
      expect(flushes).toHaveLength(1);
      expect(flushes[0]).toMatch(/^HTTP\/1\.1 200[^]*data: \{"first":true\}\n\ndata: a\n\ndata: b\n\n/);
      src.sink!.onEnd();
      await new Promise((r) => res.on("end", r));
      expect(await outcome).toEqual({ status: 200, aborted: false });
    } finally {
      await closeServer(server);
    }
  });

  it("events handed over while the writer is held wait for release(), then leave with the end in one write", async () => {
    const src = new FakeSource();
    const { server, url, flushes } = await serveCountingFlushes(src);
    try {
      const { res, text } = await readPushed(url, src);
      await until(() => text().includes("first"));
      const before = flushes.length;
      src.sink!.onEvent({ data: "a" });
      src.writeHold!.hold();
      src.sink!.onEvent({ data: "b" });
      await new Promise((r) => setTimeout(r, 20));
      expect(text()).not.toContain("data: a");
      expect(flushes).toHaveLength(before);
      src.sink!.onEvent({ data: "[DONE]" });
      src.writeHold!.release();
      src.sink!.onEnd();
      await new Promise((r) => res.on("end", r));
      expect(text()).toContain("data: a\n\ndata: b\n\ndata: [DONE]\n\n");
      expect(flushes.slice(before)).toHaveLength(1);
    } finally {
      await closeServer(server);
    }
  });

  it("a release() that does not end the stream flushes what was held", async () => {
    const src = new FakeSource();
    const { server, url } = await serveCountingFlushes(src);
    try {
      const { res, text } = await readPushed(url, src);
      src.writeHold!.hold();
      src.sink!.onEvent({ data: "a" });
      await new Promise((r) => setTimeout(r, 20));
      expect(text()).not.toContain("data: a");
      src.writeHold!.release();
      await until(() => text().includes("data: a"));
      src.sink!.onEnd();
      await new Promise((r) => res.on("end", r));
    } finally {
      await closeServer(server);
    }
  });
});

describe("writeResponse, pushed: what an open stream keeps", () => {
  it("lets the header text go once it is on the wire; Node still reports the headers sent and the stream ends", async () => {
    const src = new FakeSource();
    const { server, url, outcome } = await serveEvents(src);
    let res!: import("node:http").ServerResponse;
    server.on("request", (_req, r) => (res = r));
    try {
      const { res: client, text } = await readPushed(url, src);
      await until(() => text().includes("first"));
      const kept = (res as unknown as { _header: string })._header;
      expect(kept.length).toBe(1);
      expect(res.headersSent).toBe(true);
      expect(() => res.setHeader("x-late", "1")).toThrow(/headers/i);
      expect(client.headers["content-type"]).toMatch(/^text\/event-stream/);
      src.sink!.onEvent({ data: "[DONE]" });
      src.sink!.onEnd();
      await new Promise((r) => client.on("end", r));
      expect(text()).toBe('data: {"first":true}\n\ndata: [DONE]\n\n');
      expect(await outcome).toEqual({ status: 200, aborted: false });
    } finally {
      await closeServer(server);
    }
  });
});
