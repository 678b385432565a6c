import { describe, expect, it } from "vitest";
import { MAX_SSE_EVENT_CHARS, SseEventTooLargeError, SseParser, parseSse } from "./parse.ts";
import { encodeSse } from "./encode.ts";

describe("SseParser", () => {
  it("parses LF, CRLF and CR framed events, including splits inside a CRLF", () => {
    const p = new SseParser();
    const out = [
      ...p.push("data: a\n\ndata: b\r"),
      ...p.push("\n\r\ndata: c\r\rdata: d\n"),
      ...p.push("\n"),
    ];
    expect(out.map((e) => e.data)).toEqual(["a", "b", "c", "d"]);
  });

  it("joins multi-line data, keeps event names, skips comments and strips one leading space", () => {
    const p = new SseParser();
    const out = p.push(": keep-alive\n\nevent: message_start\ndata:  x\ndata: y\nid: 7\n\n");
    expect(out).toEqual([{ event: "message_start", data: " x\ny" }]);
  });

  it("handles UTF-8 characters split across byte chunks", () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo ✓"}\n\n');
    const p = new SseParser();
    const out = [];
    for (let i = 0; i < bytes.length; i++) out.push(...p.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual([{ data: '{"t":"héllo ✓"}' }]);
  });

  it("drops an unterminated event at EOF and events with no data", async () => {
    async function* src() { yield "event: ping\n\n"; yield "data: 1\n\n"; yield "data: partial"; }
    const events = [];
    for await (const e of parseSse(src())) events.push(e);
    expect(events).toEqual([{ data: "1" }]);
  });

  it("drops one leading BOM (WHATWG), even cut across reads, so the first event is not lost; later ones are data", () => {
    const wire = '\uFEFFdata: {"t":"Hé"}\n\ndata: \uFEFFx\n\n';
    expect(new SseParser().push(wire)).toEqual([{ data: '{"t":"Hé"}' }, { data: "\uFEFFx" }]);
    const bytes = new TextEncoder().encode(wire);
    const p = new SseParser();
    const out = [];
    for (let i = 0; i < bytes.length; i++) out.push(...p.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual([{ data: '{"t":"Hé"}' }, { data: "\uFEFFx" }]);
    // Only one: a second is the first line's (unknown) field name, as the spec has it.
    expect(new SseParser().push('\uFEFF\uFEFFdata: 1\n\ndata: 2\n\n')).toEqual([{ data: "2" }]);
  });

  it("round-trips what encodeSse writes", () => {
    const p = new SseParser();
    const text = encodeSse({ data: '{"a":1}' }) + encodeSse({ event: "ping", data: '{"type":"ping"}' });
    expect(p.push(text)).toEqual([{ data: '{"a":1}' }, { event: "ping", data: '{"type":"ping"}' }]);
  });
});

describe("SseParser bounds what an upstream can make it hold (issue 25)", () => {
  it("a long line split over many reads parses whole, however the reads cut it", () => {
    const value = "x".repeat(3 * 1024 * 1024);
    const text = `data: ${value}\r\n\r\n`;
    const p = new SseParser();
    const out = [];
    for (let i = 0; i < text.length; i += 1000) out.push(...p.push(text.slice(i, i + 1000)));
    expect(out).toHaveLength(1);
    expect(out[0]!.data.length).toBe(value.length);
    expect(out[0]!.data === value).toBe(true);
  });

  it("a line past the limit fails the stream as soon as the limit is passed, not at its end", () => {
    const p = new SseParser(1000);
    expect(p.push('data: {"choices":[{"delta":{"content":"')).toEqual([]);
    expect(() => {
      for (let i = 0; i < 100; i++) p.push("a".repeat(100));
    }).toThrow(SseEventTooLargeError);
  });

  it("counts the whole event: many data lines, a single huge read, an event name or a comment", () => {
    const many = new SseParser(1000);
    expect(() => many.push("data: 0123456789\n".repeat(200))).toThrow(SseEventTooLargeError);
    expect(() => new SseParser(1000).push(`data: ${"a".repeat(2000)}\n\n`)).toThrow(/larger than 1000 characters/);
    expect(() => new SseParser(1000).push(`event: ${"e".repeat(2000)}\n`)).toThrow(SseEventTooLargeError);
    expect(() => new SseParser(1000).push(`: ${"c".repeat(2000)}`)).toThrow(SseEventTooLargeError);
  });

  it("events below the limit, however many, pass: the limit is per event", () => {
    const p = new SseParser(1000);
    const out = [];
    for (let i = 0; i < 500; i++) out.push(...p.push(`data: ${"a".repeat(900)}\n\n`));
    expect(out).toHaveLength(500);
  });

  it("the default limit is a few MiB: room for inline media, not unbounded", () => {
    expect(MAX_SSE_EVENT_CHARS).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    expect(MAX_SSE_EVENT_CHARS).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it("parseSse passes the failure on to its reader", async () => {
    async function* src() {
      yield "data: ok\n\n";
      for (let i = 0; i < 2000; i++) yield "b".repeat(16 * 1024);
    }
    const seen: string[] = [];
    await expect((async () => {
      for await (const e of parseSse(src())) seen.push(e.data);
    })()).rejects.toBeInstanceOf(SseEventTooLargeError);
    expect(seen).toEqual(["ok"]);
  });
});

describe("SseParser agrees with eventsource-parser", () => {
  it("on mixed line endings, comments, multi-line data and random read boundaries", async () => {
    const { createParser } = await import("eventsource-parser");
    const endings = ["\n", "\r\n", "\r"];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      let text = "";
      for (let e = 0; e < 6; e++) {
        const eol = () => endings[rnd(3)]!;
        if (rnd(4) === 0) text += `: ping${eol()}`;
        if (rnd(3) === 0) text += `event: ev${e}${eol()}`;
        const lines = 1 + rnd(3);
        for (let l = 0; l < lines; l++) text += `${rnd(5) === 0 ? "data:" : "data: "}{"i":${e},"l":${l},"t":"héllo ✓"}${eol()}`;
        if (rnd(5) === 0) text += `id: ${e}${eol()}`;
        text += eol();
      }
      // End on LF: with a trailing CR eventsource-parser waits for a possible LF, we dispatch at once (both valid).
      text += "\n";
      const bytes = new TextEncoder().encode(text);
      const ours: unknown[] = [];
      const p = new SseParser();
      for (let i = 0; i < bytes.length;) {
        const n = 1 + rnd(40);
        ours.push(...p.push(bytes.subarray(i, i + n)));
        i += n;
      }
      const theirs: unknown[] = [];
      const ref = createParser({ onEvent: (ev) => theirs.push(ev.event === undefined ? { data: ev.data } : { event: ev.event, data: ev.data }) });
      ref.feed(text);
      expect(ours).toEqual(theirs);
    }
  });
});
