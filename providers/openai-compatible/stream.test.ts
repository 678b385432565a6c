import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { relayChatBody, relayChatStream } from "./stream.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { Usage } from "../../core/contracts/provider.ts";
import { OPENING_HOLD_MS } from "../../core/sse/opening-hold.ts";
import { loopLag } from "../../test/helpers/loop-lag.ts";

async function* events(list: SseEvent[]) {
  yield* list;
}

const chunk = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}';
const usageChunk = '{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":4}}}';

async function collect(wantUsage: boolean, list: SseEvent[]) {
  const usage: Usage[] = [];
  let firsts = 0;
  const out: SseEvent[] = [];
  for await (const e of relayChatStream(events(list), wantUsage, { reportUsage: (u) => usage.push(u), reportFirstToken: () => firsts++ }, "up")) out.push(e);
  return { out, usage, firsts };
}

describe("relayChatStream", () => {
  it("passes events through untouched (same objects) and reports usage from the usage chunk", async () => {
    const list = [{ data: chunk }, { data: usageChunk }, { data: "[DONE]" }];
    const { out, usage, firsts } = await collect(true, list);
    expect(out).toEqual(list);
    expect(out[0]).toBe(list[0]);
    expect(usage).toEqual([{ inputTokens: 6, cacheReadTokens: 4, outputTokens: 3 }]);
    expect(firsts).toBe(1);
  });

  it("drops the usage chunk when the client did not ask for it, but still meters it", async () => {
    const { out, usage } = await collect(false, [{ data: chunk }, { data: usageChunk }, { data: "[DONE]" }]);
    expect(out.map((e) => e.data)).toEqual([chunk, "[DONE]"]);
    expect(usage).toHaveLength(1);
  });

  it("turns a stream that ends without [DONE] into an UPSTREAM_ERROR", async () => {
    await expect(collect(true, [{ data: chunk }])).rejects.toMatchObject({ code: "UPSTREAM_ERROR", status: 502 });
  });
});

describe("relayChatStream: usage on a choice chunk (Mistral's last chunk, sent unasked)", () => {
  const head = { id: "m", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest" };
  const text = JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: "assistant", content: "hello" }, finish_reason: null }] });
  const usage = { prompt_tokens: 7, completion_tokens: 900, total_tokens: 907 };
  const last = JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }], usage });
  const list = [{ data: text }, { data: last }, { data: "[DONE]" }];

  it("a client that did not ask gets no usage on any chunk; the usage is still metered", async () => {
    const { out, usage: reported } = await collect(false, list);
    expect(out.map((e) => JSON.parse(e.data === "[DONE]" ? "null" : e.data)?.usage)).toEqual([undefined, undefined, undefined]);
    expect(JSON.parse(out[1]!.data)).toEqual({ ...head, choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }] });
    expect(reported).toEqual([{ inputTokens: 7, outputTokens: 900 }]);
  });

  it("a client that asked gets it as OpenAI sends it: usage null on the choice chunk, a usage-only chunk before [DONE]", async () => {
    const { out, usage: reported } = await collect(true, list);
    expect(out.map((e) => e.data).slice(0, 1)).toEqual([text]);
    expect(JSON.parse(out[1]!.data)).toEqual({ ...head, choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }], usage: null });
    expect(JSON.parse(out[2]!.data)).toEqual({ ...head, choices: [], usage });
    expect(out[3]!.data).toBe("[DONE]");
    expect(reported).toEqual([{ inputTokens: 7, outputTokens: 900 }]);
  });

  it("a host that sends its own usage-only chunk after one (vLLM's continuous usage) gets it relayed once", async () => {
    const final = JSON.stringify({ ...head, choices: [], usage });
    const { out } = await collect(true, [{ data: text }, { data: last }, { data: final }, { data: "[DONE]" }]);
    expect(out.map((e) => e.data).filter((d) => d.includes('"choices":[]'))).toEqual([final]);
    expect(out.at(-1)!.data).toBe("[DONE]");
  });
});

describe("relayChatStream: spaced JSON (Python's json.dumps, Go's indent)", () => {
  /** JSON as Python's json.dumps writes it: ", " and ": " between tokens. */
  const spaced = (v: unknown): string => JSON.stringify(v, null, 1).replace(/\n */g, " ").replace(/([[{]) /g, "$1").replace(/ ([\]}])/g, "$1");
  const content = { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }], usage: null };
  // 5000 completion tokens (hidden reasoning): billed on the visible text's estimate when this chunk is missed.
  const usage = { id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5000, total_tokens: 5010 } };

  it("reports the usage chunk's tokens and drops that chunk for a client that did not ask for it", async () => {
    expect(spaced(usage)).toContain('"usage": {"prompt_tokens": 10,');
    const { out, usage: reported } = await collect(false, [{ data: spaced(content) }, { data: spaced(usage) }, { data: "[DONE]" }]);
    expect(reported).toEqual([{ inputTokens: 10, outputTokens: 5000 }]);
    expect(out.map((e) => e.data)).toEqual([spaced(content), "[DONE]"]);
    // Pretty-printed over several lines (an event of several data: lines, joined with "\n"): the same.
    const pretty = await collect(true, [{ data: spaced(content) }, { data: JSON.stringify(usage, null, 2) }, { data: "[DONE]" }]);
    expect(pretty.usage).toEqual([{ inputTokens: 10, outputTokens: 5000 }]);
  });

  it("an in-band error, spaced, is the gateway's error (not relayed as a chunk)", async () => {
    const openai = spaced({ error: { message: "Internal error", type: "server_error" } });
    const openrouter = spaced({ ...content, usage: undefined, error: { message: "Provider returned error", code: 502 } });
    for (const data of [openai, openrouter]) {
      await expect(collect(true, [{ data: spaced(content) }, { data }, { data: "[DONE]" }])).rejects.toMatchObject({ code: "UPSTREAM_ERROR", message: expect.stringContaining("failed mid-stream") });
    }
  });

  it("the words usage or error in the text, or such keys without an object value, are chunks like any other", async () => {
    const text = (s: string) => spaced({ ...content, choices: [{ index: 0, delta: { content: s }, finish_reason: null }], usage: undefined });
    const list = [text('"usage": {"x": 1}, "error": {"message": "no"}'), spaced({ ...content, usage: undefined, error: null, type: "usage" }), spaced(usage), "[DONE]"].map((data) => ({ data }));
    const { out, usage: reported } = await collect(false, list);
    expect(out).toEqual([list[0], list[1], list[3]]);
    expect(reported).toEqual([{ inputTokens: 10, outputTokens: 5000 }]);
  });
});

describe("relayChatStream: the first token and empty streams", () => {
  const role = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}';
  const filter = '{"id":"","object":"","choices":[],"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}';
  const finish = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}';
  const tool = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":""}}]}}],"usage":null}';

  it("a 200 stream with nothing but [DONE] is a retryable 'empty stream' UPSTREAM_ERROR, raised before any event", async () => {
    const seen: SseEvent[] = [];
    const run = (async () => { for await (const e of relayChatStream(events([{ data: "[DONE]" }]), true, { reportUsage: () => {}, reportFirstToken: () => {} }, "up")) seen.push(e); })();
    await expect(run).rejects.toMatchObject({ code: "UPSTREAM_ERROR", status: 502, retryable: true, message: expect.stringContaining("empty stream") });
    expect(seen).toEqual([]);
  });

  it("so is a role chunk (and Azure's filter results) followed by [DONE] or by the end of the body: nothing is relayed", async () => {
    await expect(collect(true, [{ data: filter }, { data: role }, { data: "[DONE]" }])).rejects.toMatchObject({ retryable: true, message: expect.stringContaining("empty stream") });
    await expect(collect(true, [{ data: role }])).rejects.toMatchObject({ retryable: true, message: expect.stringContaining("empty stream") });
  });

  it("the events before the first token are held and go out with it, in order; the first token is the first with output", async () => {
    const list = [{ data: role }, { data: role }, { data: chunk }, { data: finish }, { data: "[DONE]" }];
    let pulled = 0;
    async function* upstream() {
      for (const e of list) {
        pulled++;
        yield e;
      }
    }
    const marks: number[] = [];
    const out: string[] = [];
    const call = { reportUsage: () => {}, reportFirstToken: () => marks.push(pulled) };
    for await (const e of relayChatStream(upstream(), true, call, "up")) {
      // nothing goes out before the first chunk with output has been read
      expect(pulled).toBeGreaterThanOrEqual(3);
      out.push(e.data);
    }
    expect(out).toEqual(list.map((e) => e.data));
    expect(marks).toEqual([3]); // timed at the content chunk, not at the role chunks
  });

  it("Azure's prompt filter preamble (object and id empty: no chat chunk) is dropped; its later filter results are not", async () => {
    const azureFilter = '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}';
    const inChoice = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"content_filter_results":{"hate":{"filtered":false}}}],"usage":null}';
    const { out } = await collect(true, [{ data: azureFilter }, { data: role }, { data: inChoice }, { data: finish }, { data: "[DONE]" }]);
    expect(out.map((e) => e.data)).toEqual([role, inChoice, finish, "[DONE]"]);
    expect(out.every((e) => JSON.parse(e.data === "[DONE]" ? "{}" : e.data).object !== "")).toBe(true);
  });

  it("a tool call is a first token; a finish_reason with no output is an (empty) answer, relayed but not timed", async () => {
    expect((await collect(true, [{ data: role }, { data: tool }, { data: finish }, { data: "[DONE]" }])).firsts).toBe(1);
    const empty = await collect(true, [{ data: role }, { data: finish }, { data: "[DONE]" }]);
    expect(empty.out.map((e) => e.data)).toEqual([role, finish, "[DONE]"]);
    expect(empty.firsts).toBe(0);
  });
});

describe("relayChatBody (bytes in, events out)", () => {
  const wire = `data: ${chunk}\n\ndata: ${usageChunk}\n\ndata: [DONE]\n\n`;
  async function* reads(text: string, size: number, failAfter?: number) {
    const bytes = new TextEncoder().encode(text);
    for (let i = 0, n = 0; i < bytes.length; i += size, n++) {
      if (failAfter !== undefined && n === failAfter) throw Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
      yield bytes.subarray(i, i + size);
    }
  }
  const run = async (src: AsyncIterable<Uint8Array>, wantUsage: boolean, signal = new AbortController().signal) => {
    const usage: Usage[] = [];
    const out: string[] = [];
    for await (const e of relayChatBody(src, wantUsage, { reportUsage: (u) => usage.push(u), reportFirstToken: () => {} }, "up", signal)) out.push(e.data);
    return { out, usage };
  };

  it("parses reads cut anywhere and relays like relayChatStream", async () => {
    for (const size of [1, 7, 64, 4096]) {
      expect(await run(reads(wire, size), false)).toEqual({ out: [chunk, "[DONE]"], usage: [{ inputTokens: 6, cacheReadTokens: 4, outputTokens: 3 }] });
      expect((await run(reads(wire, size), true)).out).toEqual([chunk, usageChunk, "[DONE]"]);
    }
  });

  it("maps a transport failure mid-stream to a retryable UPSTREAM_ERROR naming the provider", async () => {
    await expect(run(reads(wire, 16, 3), true)).rejects.toMatchObject({ code: "UPSTREAM_ERROR", status: 502, retryable: true, details: { provider: "up" } });
  });

  it("ends with UPSTREAM_ERROR when the body ends before [DONE]", async () => {
    await expect(run(reads(`data: ${chunk}\n\n`, 32), true)).rejects.toMatchObject({ code: "UPSTREAM_ERROR", status: 502 });
  });
});

describe("relayChatBody on a Node stream", () => {
  const call = { reportUsage: () => {}, reportFirstToken: () => {} };
  const role = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}';
  const frames = [`data: ${chunk}\n\n`, "data: [DONE]\n\n", "data: {\"late\":true}\n\n"];

  it("stops at [DONE], then drains the rest without destroying the body (the connection can be reused)", async () => {
    const body = Readable.from(frames.map((f) => Buffer.from(f)), { objectMode: false });
    const out: string[] = [];
    for await (const e of relayChatBody(body, true, call, "up", new AbortController().signal)) out.push(e.data);
    expect(out).toEqual([chunk, "[DONE]"]);
    // The relay drains the rest as soon as it sees [DONE]: the end may already have come.
    if (!body.readableEnded) await new Promise((r) => body.once("end", r));
    expect(body.readableEnded).toBe(true);
  });

  it("a body of [DONE] alone, or of a role chunk that then ends, is an empty stream: the first next() rejects", async () => {
    const role = '{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}],"usage":null}';
    for (const wire of ["data: [DONE]\n\n", `data: ${role}\n\n`]) {
      const it = relayChatBody(Readable.from([Buffer.from(wire)], { objectMode: false }), true, call, "up", new AbortController().signal);
      await expect(it.next()).rejects.toMatchObject({ code: "UPSTREAM_ERROR", retryable: true, details: { provider: "up", reason: "empty_stream" } });
    }
  });

  it("a role chunk then silence (keepalive comments) is not held for ever: it goes out after the bounded hold", async () => {
    const body = new PassThrough();
    const it = relayChatBody(body, true, call, "up", new AbortController().signal);
    const lag = loopLag();
    const t0 = Date.now();
    body.write(`data: ${role}\n\n`);
    const keepalive = setInterval(() => body.write(": keepalive\n\n"), 100);
    const first = await it.next();
    clearInterval(keepalive);
    const took = Date.now() - t0;
    expect(first.value?.data).toBe(role);
    expect(took).toBeGreaterThanOrEqual(OPENING_HOLD_MS - 20);
    // Late by no more than a margin and what the loaded machine held the loop up meanwhile (a fixed 500 ms was not
    // always enough with test files side by side); a release a second late still fails on an idle machine.
    expect(took).toBeLessThan(OPENING_HOLD_MS + 100 + (await lag()));
    // The answer still comes, and is relayed as it comes.
    body.write(`data: ${chunk}\n\n`);
    expect((await it.next()).value?.data).toBe(chunk);
    body.end("data: [DONE]\n\n");
    expect((await it.next()).value?.data).toBe("[DONE]");
  });

  it("an empty stream found after the hold let the role chunk go is a stream error, never a silent empty answer", async () => {
    const body = new PassThrough();
    const it = relayChatBody(body, true, call, "up", new AbortController().signal);
    body.write(`data: ${role}\n\n`);
    expect((await it.next()).value?.data).toBe(role);
    body.end("data: [DONE]\n\n");
    await expect(it.next()).rejects.toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "empty_stream" } });
  });

  it("destroys the body when the consumer stops early (client gone)", async () => {
    const body = Readable.from(frames.map((f) => Buffer.from(f)), { objectMode: false });
    for await (const _ of relayChatBody(body, true, call, "up", new AbortController().signal)) break;
    expect(body.destroyed).toBe(true);
  });
});

describe("relayChatStream: tool-call arguments sent as an object (a host not known to send strings)", () => {
  const objArgs = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments": {"city":"Zürich"}}}]}}],"usage":null}';
  const relay = async (scan: boolean) => {
    const out: SseEvent[] = [];
    for await (const e of relayChatStream(events([{ data: objArgs }, { data: "[DONE]" }]), false, { reportUsage: () => {}, reportFirstToken: () => {} }, "up", scan)) out.push(e);
    return JSON.parse(out[0]!.data).choices[0].delta.tool_calls[0].function.arguments;
  };

  it("goes out as the JSON string it stands for", async () => {
    expect(await relay(true)).toBe('{"city":"Zürich"}');
  });

  it("a known host's string arguments (the wire's form) pass byte-for-byte, the chunk unparsed and unscanned", async () => {
    // Spacing, escapes and key order as a host wrote them: a chunk re-serialised would change them.
    const strArgs = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments": "{\\"city\\": \\"Z\\u00fcrich\\", \\"q\\": {\\"a\\":1}}"}}]}}],"usage":null}';
    const sent = { data: strArgs };
    const out: SseEvent[] = [];
    for await (const e of relayChatStream(events([sent, { data: "[DONE]" }]), false, { reportUsage: () => {}, reportFirstToken: () => {} }, "up", false)) out.push(e);
    expect(out[0]).toBe(sent);
    expect(out[0]!.data).toBe(strArgs);
    expect(JSON.parse(JSON.parse(strArgs).choices[0].delta.tool_calls[0].function.arguments)).toEqual({ city: "Zürich", q: { a: 1 } });
  });
});

describe("a chunk that is not JSON (`data: {not json` mid-stream)", () => {
  const call = { reportUsage: () => {}, reportFirstToken: () => {} };
  const wire = `data: ${chunk}\n\ndata: ${chunk}\n\ndata: {not json\n\ndata: [DONE]\n\n`;
  /** What the relay gave the client, and the error it ended with. */
  async function relayed(it: AsyncIterable<SseEvent>) {
    const out: string[] = [];
    try {
      for await (const e of it) out.push(e.data);
    } catch (error) {
      return { out, error };
    }
    return { out, error: undefined };
  }
  const malformed = { status: 502, code: "UPSTREAM_ERROR", message: "Provider up sent a stream event that is not JSON", details: { provider: "up", reason: "invalid_event" } };

  it("is never relayed: the stream ends with the provider's UPSTREAM_ERROR, the chunks before it relayed", async () => {
    const list = [{ data: chunk }, { data: chunk }, { data: "{not json" }, { data: "[DONE]" }];
    const { out, error } = await relayed(relayChatStream(events(list), true, call, "up"));
    expect(out).toEqual([chunk, chunk]);
    expect(error).toMatchObject(malformed);
  });

  it("the same from bytes (the hot path), read in any pieces, and from a Node stream", async () => {
    const bytes = Buffer.from(wire);
    for (const size of [1, 9, 4096]) {
      const reads = (async function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
      })();
      expect(await relayed(relayChatBody(reads, true, call, "up", new AbortController().signal))).toMatchObject({ out: [chunk, chunk], error: malformed });
    }
    const body = Readable.from([bytes], { objectMode: false });
    expect(await relayed(relayChatBody(body, true, call, "up", new AbortController().signal))).toMatchObject({ out: [chunk, chunk], error: malformed });
  });

  it("an error chunk that is not JSON, or one cut short, is the same error, not relayed", async () => {
    for (const bad of ['{"error": upstream reset', '{"error":{"message":"boom"', '{"id":"c","usage":{"prompt_tokens":1']) {
      const { out, error } = await relayed(relayChatStream(events([{ data: chunk }, { data: bad }, { data: "[DONE]" }]), true, call, "up"));
      expect([bad, out]).toEqual([bad, [chunk]]);
      expect(error).toMatchObject(malformed);
    }
  });

  it("before the answer began it fails before anything is relayed, retryable (another endpoint may serve)", async () => {
    const role = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}';
    const { out, error } = await relayed(relayChatStream(events([{ data: role }, { data: "{not json" }, { data: "[DONE]" }]), true, call, "up"));
    expect(out).toEqual([]);
    expect(error).toMatchObject({ ...malformed, retryable: true });
  });
});

describe("relayChatStream: when the usage is final", () => {
  async function finals(list: SseEvent[]): Promise<boolean[]> {
    const flags: boolean[] = [];
    for await (const _ of relayChatStream(events(list), true, { reportUsage: (_u: Usage, o?: { final?: boolean }) => flags.push(Boolean(o?.final)), reportFirstToken: () => {} } as never, "up")) void _;
    return flags;
  }
  const usage = { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 };
  const at = (choices: unknown[]) => JSON.stringify({ id: "c", object: "chat.completion.chunk", choices, usage });

  it("the choice-less usage chunk, and usage beside a lone answer's finish, are final", async () => {
    expect(await finals([{ data: chunk }, { data: usageChunk }, { data: "[DONE]" }])).toEqual([true]);
    expect(await finals([{ data: chunk }, { data: at([{ index: 0, delta: {}, finish_reason: "stop" }]) }, { data: "[DONE]" }])).toEqual([true]);
  });

  it("with n > 1, a running usage beside one choice's finish is not (the others are still being written)", async () => {
    expect(await finals([{ data: chunk }, { data: at([{ index: 1, delta: {}, finish_reason: "stop" }]) }, { data: "[DONE]" }])).toEqual([false]);
  });
});
