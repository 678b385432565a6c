// boundedFetch on event streams: each event is bounded on its own (a long session's many small events pass), an
// event over the bound is cut with an error answer for the request the stream answers, and a stream answering no
// one request (a legacy SSE session's GET stream) is cut with its waiting requests told.
import { describe, expect, it } from "vitest";
import { boundedFetch } from "./bounded-fetch.ts";

const enc = new TextEncoder();

/** A fetch answering `text` as an event stream, in chunks of `size` bytes. */
const streamOf = (text: string, size: number) => async () => {
  const bytes = enc.encode(text);
  return new Response(new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.subarray(i, i + size)); c.close(); } }), { headers: { "content-type": "text/event-stream" } });
};

const post = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call" }) };

describe("boundedFetch on an event stream", () => {
  it.each([1, 7, 4096])("passes events each under the bound whatever their total, LF or CRLF (chunks of %i bytes)", async (size) => {
    const text = Array.from({ length: 50 }, (_, i) => (i % 2 ? `data: ${"a".repeat(60)}\n\n` : `event: message\r\ndata: ${"b".repeat(50)}\r\n\r\n`)).join("");
    const f = boundedFetch(streamOf(text, size) as never, 100, "s");
    expect(await (await f("http://x", post as never)).text()).toBe(text);
  });

  it.each([1, 7, 4096])("cuts an event over the bound and answers the request with an error naming the limit (chunks of %i bytes)", async (size) => {
    const text = `data: ${"a".repeat(60)}\n\ndata: ${"x".repeat(500)}\n\ndata: never\n\n`;
    const f = boundedFetch(streamOf(text, size) as never, 100, "s");
    const out = await (await f("http://x", post as never)).text();
    // The first event whole, then 100 bytes of the cut one (its blank line's byte counted to the next event).
    expect(out.startsWith(`data: ${"a".repeat(60)}\n\ndata: ${"x".repeat(93)}\n\nevent: message\ndata: `)).toBe(true);
    expect(JSON.parse(out.split("\n").at(-3)!.slice(6))).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32000, message: 'the answer of MCP server "s" was larger than 100 bytes (mcp.max_result_bytes) and was cut off' } });
    expect(out).not.toContain("never");
  });

  it("a stream answering no one request (a GET) is cut with an error, the requests waiting on it told first", async () => {
    const cut: string[] = [];
    const f = boundedFetch(streamOf(`data: ${"x".repeat(500)}\n\n`, 64) as never, 100, "s", (m) => cut.push(m));
    const res = await f("http://x", { method: "GET" } as never);
    await expect(res.text()).rejects.toThrow(/larger than 100 bytes/);
    expect(cut).toEqual(['an answer of MCP server "s" was larger than 100 bytes (mcp.max_result_bytes): the stream carrying its answers (transport: sse) was cut off']);
  });
});
