// relayChatBody over a Node stream, pushed (core/sse/push.ts): the slow-stream hot path, where no promise waits
// between frames. Same behaviour as pulled: order, [DONE], usage once, failures as gateway errors, back-pressure.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { PULL_QUEUE_LIMIT, relayChatBody } from "./stream.ts";
import { canPush, PUSH, type EventSink, type PushControl, type PushableIterator } from "../../core/sse/push.ts";
import type { Usage } from "../../core/contracts/provider.ts";

const chunk = (i: number) => `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"w${i}"}}],"usage":null}`;
const usageChunk = '{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}';
const frame = (d: string) => `data: ${d}\n\n`;
const tick = () => new Promise((r) => setImmediate(r));

/** A sink that records what it gets. */
function recorder() {
  const got: string[] = [];
  let ended = 0;
  const errors: unknown[] = [];
  const sink: EventSink = { onEvent: (ev) => void got.push(ev.data), onEnd: () => void ended++, onError: (e) => void errors.push(e) };
  return { sink, got, errors, ended: () => ended };
}

function relay(body: PassThrough, wantUsage = true) {
  const usage: Usage[] = [];
  const it = relayChatBody(body, wantUsage, { reportUsage: (u) => usage.push(u), reportFirstToken: () => {} }, "up", new AbortController().signal);
  return { it, usage };
}

describe("relayChatBody on a Node stream, pushed", () => {
  it("pushes events in order across reads, drops nothing, ends at [DONE], reports usage once and drains the body", async () => {
    const body = new PassThrough();
    const { it, usage } = relay(body);
    // Not before the first event is pulled: the opening hold (core/sse/opening-hold.ts) decides when it goes out.
    expect(canPush(it)).toBe(false);
    body.write(frame(chunk(0)));
    expect((await it.next()).value?.data).toBe(chunk(0));
    expect(canPush(it)).toBe(true);
    const r = recorder();
    (it as unknown as PushableIterator)[PUSH](r.sink);
    body.write(frame(chunk(9)) + frame(chunk(1)).slice(0, 20));
    await tick();
    expect(r.got).toEqual([chunk(9)]);
    body.write(frame(chunk(1)).slice(20) + frame(usageChunk));
    body.write(frame("[DONE]") + frame('{"late":true}'));
    body.end();
    await tick();
    await tick();
    expect(r.got).toEqual([chunk(9), chunk(1), usageChunk, "[DONE]"]);
    expect(r.ended()).toBe(1);
    expect(r.errors).toEqual([]);
    expect(usage).toHaveLength(1);
    // Drained to its end (the connection can be reused), not destroyed.
    if (!body.readableEnded) await new Promise((r) => body.once("end", r));
    expect(body.readableEnded).toBe(true);
  });

  it("pulled first, then pushed: the rest of the same read follows in order, never from inside [PUSH] itself", async () => {
    const body = new PassThrough();
    const { it } = relay(body);
    body.write(frame(chunk(0)) + frame(chunk(1)) + frame(chunk(2)));
    expect((await it.next()).value?.data).toBe(chunk(0));
    const r = recorder();
    (it as unknown as PushableIterator)[PUSH](r.sink);
    expect(r.got).toEqual([]); // asynchronous: the caller has its control before the first event
    await tick();
    expect(r.got).toEqual([chunk(1), chunk(2)]);
    body.end(frame("[DONE]"));
    await tick();
    await tick();
    expect(r.got.at(-1)).toBe("[DONE]");
    expect(r.ended()).toBe(1);
  });

  it("holds events while paused (the body paused too) until every pause is resumed", async () => {
    const body = new PassThrough();
    const { it } = relay(body);
    const r = recorder();
    const control: PushControl = (it as unknown as PushableIterator)[PUSH](r.sink);
    body.write(frame(chunk(0)));
    await tick();
    control.pause(); // e.g. the writer (socket full)
    control.pause(); // and metering (ledger commit)
    body.write(frame(chunk(1)) + frame(chunk(2)));
    await tick();
    expect(r.got).toEqual([chunk(0)]);
    expect(body.isPaused()).toBe(true);
    control.resume();
    await tick();
    expect(r.got).toEqual([chunk(0)]);
    control.resume();
    await tick();
    await tick();
    expect(r.got).toEqual([chunk(0), chunk(1), chunk(2)]);
    body.end(frame("[DONE]"));
    await tick();
    await tick();
    expect(r.ended()).toBe(1);
  });

  it("an upstream that ends before [DONE] or fails mid-stream becomes an UPSTREAM_ERROR, after the events read before it", async () => {
    const ends = new PassThrough();
    const a = recorder();
    (relay(ends).it as unknown as PushableIterator)[PUSH](a.sink);
    ends.end(frame(chunk(0)));
    await tick();
    await tick();
    expect(a.got).toEqual([chunk(0)]);
    expect(a.errors).toHaveLength(1);
    expect(a.errors[0]).toMatchObject({ status: 502, code: "UPSTREAM_ERROR" });
    expect(a.ended()).toBe(0);

    const fails = new PassThrough();
    const b = recorder();
    (relay(fails).it as unknown as PushableIterator)[PUSH](b.sink);
    fails.write(frame(chunk(0)));
    await tick();
    fails.destroy(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }));
    await tick();
    await tick();
    expect(b.got).toEqual([chunk(0)]);
    expect(b.errors[0]).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", details: { reason: "UND_ERR_SOCKET" } });
  });

  it("cancel (the client left) destroys the body quietly: no end, no error", async () => {
    const body = new PassThrough();
    const r = recorder();
    const control = (relay(body).it as unknown as PushableIterator)[PUSH](r.sink);
    body.write(frame(chunk(0)));
    await tick();
    control.cancel();
    body.write(frame(chunk(1)));
    await tick();
    expect(body.destroyed).toBe(true);
    expect(r.got).toEqual([chunk(0)]);
    expect(r.ended()).toBe(0);
    expect(r.errors).toEqual([]);
  });

  it("pulled only, the body keeps flowing while a few events wait (one write for a fast stream), and pauses past the limit", async () => {
    const body = new PassThrough();
    const { it } = relay(body);
    body.write(frame(chunk(0)) + frame(chunk(1)));
    expect((await it.next()).value?.data).toBe(chunk(0));
    expect(body.isPaused()).toBe(false);
    const many = Array.from({ length: PULL_QUEUE_LIMIT + 10 }, (_, i) => frame(chunk(i + 2))).join("");
    body.write(many);
    expect((await it.next()).value?.data).toBe(chunk(1));
    expect(body.isPaused()).toBe(true);
    for (let i = 0; i < PULL_QUEUE_LIMIT + 10; i++) expect((await it.next()).value?.data).toBe(chunk(i + 2));
    body.end(frame("[DONE]"));
    expect((await it.next()).value?.data).toBe("[DONE]");
    expect((await it.next()).done).toBe(true);
  });
});
