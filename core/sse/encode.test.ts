import { describe, expect, it } from "vitest";
import { encodeSse, encodeSseCrlf } from "./encode.ts";
import { SseParser } from "./parse.ts";

/** What a client's SSE parser reads back from the encoded events. */
const reread = (wire: string) => new SseParser().push(wire);

describe("encodeSse", () => {
  it("writes a one-line event as it came", () => {
    expect(encodeSse({ data: '{"a":1}' })).toBe('data: {"a":1}\n\n');
    expect(encodeSse({ event: "ping", data: '{"type":"ping"}' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
  });

  it("an upstream's JSON split over several data: lines goes out as one line of the same JSON", () => {
    // As the parser hands it over: the lines joined with "\n". Written as it came, the second line had no field
    // name, and the openai and anthropic SDKs threw SyntaxError on the `{` left alone on the first.
    const data = '{\n"id": "chatcmpl-1", "n": 12345678901234567890,\n"choices": [{"delta": {"content": "a\\nb"}}]}';
    for (const ev of [{ data }, { event: "content_block_delta", data }]) {
      const wire = encodeSse(ev);
      expect(wire.split("\n").filter((l) => l !== "")).toHaveLength(ev.event ? 2 : 1);
      const [back] = reread(wire);
      expect(JSON.parse(back!.data)).toEqual(JSON.parse(data));
      // Values as they were: a big number keeps its digits (nothing is re-serialised).
      expect(back!.data).toContain("12345678901234567890");
      expect(back!.event).toBe(ev.event);
    }
  });

  it("other data with line breaks goes out as one data: line per line, read back as it was", () => {
    const data = "line one\n\nline three\n";
    const wire = encodeSse({ event: "note", data });
    expect(wire).toBe("event: note\ndata: line one\ndata: \ndata: line three\ndata: \n\n");
    expect(reread(wire)).toEqual([{ event: "note", data }]);
  });

  it("encodeSseCrlf ends a Gemini stream's events with CRLF CRLF, as the real API frames them; encodeSse keeps LF LF", () => {
    // A client that splits on "\r\n\r\n", as the API frames, read LF-framed events as one unparseable event.
    expect(encodeSseCrlf({ data: '{"candidates":[]}' })).toBe('data: {"candidates":[]}\r\n\r\n');
    const wire = encodeSseCrlf({ data: "line one\nline two" });
    expect(wire).toBe("data: line one\r\ndata: line two\r\n\r\n");
    expect(wire.replaceAll("\r\n", "")).not.toContain("\n");
    expect(reread(wire)).toEqual([{ data: "line one\nline two" }]);
    expect(encodeSse({ data: "{}" })).toBe("data: {}\n\n");
  });
});
