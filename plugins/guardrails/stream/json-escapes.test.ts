import { describe, expect, it } from "vitest";
import { decodeEscapes } from "./json-escapes.ts";

describe("decodeEscapes", () => {
  it("decodes as JSON.parse does, each character keeping the raw offset it came from", () => {
    const raw = 'a\\u0047\\"\\\\u0041\\n';
    const d = decodeEscapes(raw, false);
    expect(d.text).toBe(JSON.parse(`"${raw}"`));
    expect(d.text).toBe('aG"\\u0041\n');
    expect(d.map).toEqual([0, 1, 7, 9, 11, 12, 13, 14, 15, 16, 18]);
    expect(d.end).toBe(raw.length);
  });

  it("leaves an escape cut at the end for the next chunk, unless it is the last", () => {
    for (const tail of ["\\", "\\u", "\\u00", "\\u004"]) {
      expect(decodeEscapes("ok " + tail, false)).toMatchObject({ text: "ok ", end: 3 });
      expect(decodeEscapes("ok " + tail, true)).toMatchObject({ text: "ok " + tail, end: 3 + tail.length });
    }
  });

  it("keeps a backslash that starts no valid escape as it is; text without one is not copied", () => {
    expect(decodeEscapes("\\x \\uZZZZ", false).text).toBe("\\x \\uZZZZ");
    expect(decodeEscapes("plain", false)).toEqual({ text: "plain", map: undefined, end: 5 });
  });
});
