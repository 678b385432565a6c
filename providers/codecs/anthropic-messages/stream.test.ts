import { describe, expect, it } from "vitest";
import { relayMessagesStream } from "./stream.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { OPENING_HOLD_MS } from "../../../core/sse/opening-hold.ts";

const ev = (type: string, extra: Record<string, unknown> = {}): SseEvent => ({ event: type, data: JSON.stringify({ type, ...extra }) });
const start = ev("message_start", { message: { id: "msg_1", type: "message", role: "assistant", content: [], usage: { input_tokens: 9, output_tokens: 1 } } });
const ping = ev("ping");
const blockStart = ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
const delta = ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } });
const blockStop = ev("content_block_stop", { index: 0 });
const msgDelta = ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } });
const stop = ev("message_stop");

/** Each event in a read of its own. */
async function* from(list: SseEvent[]) {
  for (const e of list) yield [e];
}

async function relay(list: SseEvent[]) {
  const out: string[] = [];
  const marks: string[] = [];
  const call = { reportUsage: () => {}, reportFirstToken: () => marks.push(`first after ${out.length}`) };
  const error = await (async () => { for await (const e of relayMessagesStream(from(list), call, "up")) out.push(e.event!); })().then(() => undefined, (e) => e);
  return { out, marks, error };
}

describe("relayMessagesStream", () => {
  it("a read's usage is reported before its first event goes on: a consumer that stops there leaves message_delta's count reported", async () => {
    const reported: number[] = [];
    async function* oneRead() {
      yield [start, blockStart, delta, blockStop, msgDelta, stop];
    }
    const it = relayMessagesStream(oneRead(), { reportUsage: (u) => reported.push(u.outputTokens), reportFirstToken() {} }, "up");
    expect((await it.next()).value).toBe(start);
    expect((await it.next()).value).toBe(blockStart);
    await it.return!(undefined);
    expect(reported.at(-1)).toBe(2);
  });

  it("a read's usage past an error event is not reported: the stream ends at the error", async () => {
    const reported: number[] = [];
    async function* oneRead() {
      yield [start, blockStart, delta, ev("error", { error: { type: "overloaded_error", message: "Overloaded" } }), msgDelta, stop];
    }
    const out: string[] = [];
    const error = await (async () => { for await (const e of relayMessagesStream(oneRead(), { reportUsage: (u) => reported.push(u.outputTokens), reportFirstToken() {} }, "up")) out.push(e.event!); })().then(() => undefined, (e) => e);
    expect(out).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeDefined();
    expect(reported).toEqual([1]);
  });

  it("relays every event in order; message_start and ping go out with the first content block, which is the first token", async () => {
    const r = await relay([start, ping, blockStart, delta, blockStop, msgDelta, stop]);
    expect(r.error).toBeUndefined();
    expect(r.out).toEqual(["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(r.marks).toEqual(["first after 0"]);
  });

  it("message_start then message_stop, or then the end of the body: a retryable empty stream, nothing relayed", async () => {
    for (const list of [[start, ping, stop], [start], []]) {
      const r = await relay(list);
      expect(r.out).toEqual([]);
      expect(r.error).toMatchObject({ code: "UPSTREAM_ERROR", status: 502, retryable: true, details: { reason: "empty_stream" } });
    }
  });

  it("an in-band error before any content fails before anything was relayed (so dispatch can still fall back)", async () => {
    const r = await relay([start, ping, ev("error", { error: { type: "overloaded_error", message: "Overloaded" } })]);
    expect(r.out).toEqual([]);
    expect(r.error).toMatchObject({ code: "UPSTREAM_ERROR", retryable: true });
  });

  it("an in-band error about the request is the client's 400, as Anthropic's HTTP 400 is: not retried, x-should-retry: false", async () => {
    const r = await relay([start, ev("error", { error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } })]);
    expect(r.out).toEqual([]);
    expect(r.error).toMatchObject({
      status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" },
      message: "Provider up rejected the request: prompt is too long: 210000 tokens > 200000 maximum",
      details: { provider: "up", upstream_error: { type: "invalid_request_error" } },
    });
    // Each transient type stays worth another try, as its HTTP status is.
    for (const [type, status, code] of [["overloaded_error", 502, "UPSTREAM_ERROR"], ["rate_limit_error", 502, "UPSTREAM_ERROR"], ["api_error", 502, "UPSTREAM_ERROR"], ["timeout_error", 504, "UPSTREAM_TIMEOUT"]]) {
      const t = await relay([start, ev("error", { error: { type, message: "x" } })]);
      expect(t.error).toMatchObject({ status, code, retryable: true });
    }
  });

  it("an `event: error` whose data is not JSON (a proxy's `upstream reset`) is the provider failing in those words, retryable before content", async () => {
    const r = await relay([start, { event: "error", data: "upstream reset" }]);
    expect(r.out).toEqual([]);
    expect(r.error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: "Provider up failed mid-stream: upstream reset" });
    const after = await relay([start, blockStart, delta, { event: "error", data: "upstream reset" }]);
    expect(after.out).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(after.error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", message: "Provider up failed mid-stream: upstream reset" });
  });

  it("an event whose data is not JSON (`data: {not json` mid-stream) is never relayed: the provider's UPSTREAM_ERROR ends the stream", async () => {
    const malformed = { status: 502, code: "UPSTREAM_ERROR", message: "Provider up sent a stream event that is not JSON", details: { provider: "up", reason: "invalid_event" } };
    const bad = { event: "content_block_delta", data: "{not json" };
    const r = await relay([start, blockStart, delta, delta, bad, blockStop, msgDelta, stop]);
    expect(r.out).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta"]);
    expect(r.error).toMatchObject(malformed);
    // The events it reads for usage, cut short, are the same failure (before content: retryable, nothing relayed).
    const cutStart = await relay([{ event: "message_start", data: start.data.slice(0, -5) }, blockStart, delta, stop]);
    expect(cutStart).toMatchObject({ out: [], error: { ...malformed, retryable: true } });
    const cutDelta = await relay([start, blockStart, delta, blockStop, { event: "message_delta", data: msgDelta.data.slice(0, -3) }, stop]);
    expect(cutDelta.out).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop"]);
    expect(cutDelta.error).toMatchObject(malformed);
  });

  it("an answer without content blocks but with a stop_reason is an (empty) answer, relayed whole", async () => {
    const r = await relay([start, msgDelta, stop]);
    expect(r.error).toBeUndefined();
    expect(r.out).toEqual(["message_start", "message_delta", "message_stop"]);
    expect(r.marks).toEqual([]);
  });

  it("message_start then pings for ever is not held for ever: they go out after the bounded hold, each ping as it comes", async () => {
    const t0 = Date.now();
    async function* pinging() {
      yield [start];
      for (;;) {
        await new Promise((r) => setTimeout(r, 300));
        yield [ping];
      }
    }
    const it = relayMessagesStream(pinging(), { reportUsage: () => {}, reportFirstToken: () => {} }, "up");
    const at: Array<[string, number]> = [];
    for (let i = 0; i < 6; i++) {
      const r = await it.next();
      at.push([r.value!.event!, Date.now() - t0]);
    }
    await it.return!(undefined);
    expect(at[0]).toEqual(["message_start", expect.any(Number)]);
    expect(at[0]![1]).toBeGreaterThanOrEqual(OPENING_HOLD_MS - 20);
    expect(at[0]![1]).toBeLessThan(OPENING_HOLD_MS + 400);
    expect(at[5]![1] - at[4]![1]).toBeGreaterThanOrEqual(200); // released: pings in real time
  });

  it("a cut after content is still an error after what was relayed", async () => {
    const r = await relay([start, blockStart, delta]);
    expect(r.out).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(r.error?.message).toMatch(/before message_stop/);
  });
});
