import { describe, expect, it } from "vitest";
import { fromUtf8 } from "@smithy/util-utf8";
import { eventStreamCodec } from "./eventstream.ts";
import { converseEvents } from "./converse.ts";

const codec = await eventStreamCodec();
const frame = (type: string, payload: unknown) => codec.encode({
  headers: { ":event-type": { type: "string", value: type }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: fromUtf8(JSON.stringify(payload)),
});
const start = frame("messageStart", { role: "assistant" });
const delta = frame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hi" } });
const stop = frame("messageStop", { stopReason: "end_turn" });

async function* body(frames: Uint8Array[]) {
  yield* frames;
}

async function run(frames: Uint8Array[]) {
  const out: string[] = [];
  let firsts = 0;
  const call = { reportFirstToken: () => firsts++, reportUsage() {}, signal: new AbortController().signal };
  const error = await (async () => { for await (const e of converseEvents(body(frames), call, "bedrock")) out.push(e.event!); })().then(() => undefined, (e) => e);
  return { out, firsts, error };
}

describe("converseEvents", () => {
  it("messageStart goes out with the first content, which is the first token", async () => {
    expect(await run([start, delta, stop])).toEqual({ out: ["messageStart", "contentBlockDelta", "messageStop"], firsts: 1, error: undefined });
  });

  it("a stream that ends after messageStart alone is a retryable empty stream, nothing relayed", async () => {
    const r = await run([start]);
    expect(r.out).toEqual([]);
    expect(r.error).toMatchObject({ code: "UPSTREAM_ERROR", status: 502, retryable: true, details: { provider: "bedrock", reason: "empty_stream" } });
  });

  it("messageStop's stop reason without content is an (empty) answer, relayed", async () => {
    expect(await run([start, stop])).toEqual({ out: ["messageStart", "messageStop"], firsts: 0, error: undefined });
  });

  it("a read's metadata usage is reported, as final, before the read's first event goes on; an exception frame ends what counts", async () => {
    const metadata = frame("metadata", { usage: { inputTokens: 100, outputTokens: 30, cacheReadInputTokens: 7, cacheWriteInputTokens: 5 } });
    const exception = codec.encode({
      headers: { ":exception-type": { type: "string", value: "throttlingException" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "exception" } },
      body: fromUtf8(JSON.stringify({ message: "slow down" })),
    });
    const join = (...f: Uint8Array[]) => Buffer.concat(f);
    async function seen(reads: Uint8Array[]) {
      const log: string[] = [];
      const call = {
        reportFirstToken() {},
        reportUsage: (u: unknown, how?: { final?: boolean }) => log.push(`usage ${JSON.stringify(u)} final=${how?.final}`),
        signal: new AbortController().signal,
      };
      const error = await (async () => { for await (const e of converseEvents(body(reads), call, "bedrock")) log.push(e.event!); })().then(() => undefined, (e) => e);
      return { log, error };
    }
    const usage = 'usage {"inputTokens":100,"outputTokens":30,"cacheReadTokens":7,"cacheWriteTokens":5} final=true';
    // All at once: the usage before the first event.
    expect((await seen([join(start, delta, stop, metadata)])).log).toEqual([usage, "messageStart", "contentBlockDelta", "messageStop", "metadata"]);
    // A slow stream: reported when its read comes, not before.
    expect((await seen([join(start, delta), join(stop, metadata)])).log).toEqual(["messageStart", "contentBlockDelta", usage, "messageStop", "metadata"]);
    // Behind an exception frame, metadata is no answer's count: nothing reported, the events before it go on, then the error.
    const failed = await seen([join(start, delta, exception, metadata)]);
    expect(failed.log).toEqual(["messageStart", "contentBlockDelta"]);
    expect(failed.error?.message).toContain("throttlingException");
  });
});
