import { describe, expect, it } from "vitest";
import { ToolInputJson } from "./tool-input-json.ts";

/** The join a client parses at content_block_stop, for `args` in fragments of `size` characters. */
function joined(args: string, size: number): { join: string; live: string; whole: boolean } {
  const t = new ToolInputJson();
  let live = "";
  for (let i = 0; i < args.length; i += size) live += t.push(args.slice(i, i + size));
  const whole = t.whole;
  return { join: live + t.end(), live, whole };
}

const VALID = [
  '{"city":"Paris","unit":"celsius"}',
  '{"city": "Paris", "days": 5, "x": -1.5e+3, "ok": true, "no": false, "n": null}',
  ' {"a":{"b":[1,2,{"c":"d"}],"e":[]},"f":{}} ',
  '{"text":"h\\u00e9llo \\"q\\" \\\\ \\n 🎉 日本"}',
  "{}",
  '{"a":[[],[[]],{}],"b":0}',
];
const INVALID = [
  '{"city": "Par',
  '{"city": "Paris"}}',
  '{"a":1}{"b":2}',
  '{"a":1,}',
  "{'a': 1}",
  '{"a": tru',
  '{"a": 01}',
  '{"a": 1.}',
  '{"a": [1, 2',
  '{"a": {"b": {"c": "d',
  '{"a": {"b": 1,',
  '{"a": "x\\',
  '{"a": "\\u12',
  '{"ci',
  '{"city"',
  '{"city":',
  '{"a":1,',
  '{"a":"tab\there"}',
];

describe("a tool block's input from streamed chat arguments", () => {
  it("whole JSON objects join to the arguments byte for byte, whatever the fragments", () => {
    for (const args of VALID) {
      for (const size of [1, 2, 3, 5, 7, 1000]) {
        const r = joined(args, size);
        expect(r.join).toBe(args);
        expect(r.whole).toBe(true);
      }
    }
  });

  it("a string value goes out as it comes: only the top-level closing brace waits for the block's end", () => {
    const t = new ToolInputJson();
    expect(t.push('{"content": "line 1')).toBe('{"content": "line 1');
    expect(t.push("\\nline 2")).toBe("\\nline 2");
    expect(t.push('"}')).toBe('"');
    expect(t.end()).toBe("}");
  });

  it("arguments that never become a JSON object join to an object with them in rawInvalidInput", () => {
    for (const args of INVALID) {
      expect(() => JSON.parse(args)).toThrow();
      for (const size of [1, 3, 5, 1000]) {
        const parsed = JSON.parse(joined(args, size).join);
        expect(parsed.rawInvalidInput).toBe(args);
      }
    }
  });

  it("arguments broken before anything could go out are exactly the JSON path's object", () => {
    expect(JSON.parse(joined("{'a': 1}", 5).join)).toEqual({ rawInvalidInput: "{'a': 1}" });
    expect(JSON.parse(joined("city=Paris", 3).join)).toEqual({ rawInvalidInput: "city=Paris" });
    expect(joined("city=Paris", 3).live).toBe("");
  });

  it("valid JSON that is not an object is held, then the JSON path's object with its value", () => {
    expect(joined("[1,2]", 2)).toEqual({ join: '{"rawInvalidInput":[1,2]}', live: "", whole: true });
    expect(JSON.parse(joined('"x"', 1).join)).toEqual({ rawInvalidInput: "x" });
    expect(JSON.parse(joined("42", 1).join)).toEqual({ rawInvalidInput: 42 });
  });

  it("the audit's cut: the members that went out, then the arguments in rawInvalidInput", () => {
    expect(JSON.parse(joined('{"city": "Par', 5).join)).toEqual({ city: "Par", rawInvalidInput: '{"city": "Par' });
    // Two objects in one call's arguments: the first one's closing brace had waited, so the join still closes.
    expect(JSON.parse(joined('{"a":"x"}{"b":2}', 5).join)).toEqual({ a: "x", rawInvalidInput: '{"a":"x"}{"b":2}' });
    // A number waits until it ends: a key whose value had not gone out is closed with null.
    expect(JSON.parse(joined('{"a":1}{"b":2}', 5).join)).toEqual({ a: null, rawInvalidInput: '{"a":1}{"b":2}' });
  });

  it("no arguments at all: nothing (the block's input stays {})", () => {
    expect(new ToolInputJson().end()).toBe("");
  });
});
