import { describe, expect, it } from "vitest";
import { isJsonText } from "./json-text.ts";

const parses = (s: string) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

const CHUNK = '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}';
const ESCAPED = '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a\\"b\\\\c\\n\\u00e9\\/"}, "x": ["\\t", "plain", "\\\\"]}';
const SPACED = ' {\n\t"a" : [ 1 , -2.5e+3 , 0 , 0.1 , 1E9 , true , false , null , "" , { } , [ ] , "q\\"" ] }\r\n';
const VALID = [
  CHUNK, ESCAPED, SPACED,
  "[]", "{}", '""', "0", "-0", "12", "3.25", "1e-7", "true", "null", '"\u2028 \ud83d\ude00 \ud800"',
  "[".repeat(600) + "]".repeat(600), '{"a":'.repeat(600) + "1" + "}".repeat(600), '{"a":{"b":[{"c":{}},[[]],-0.5e-0]},"d":"\\\\"}',
];
const INVALID = [
  "{not json", "", " ", "[DONE]", "upstream reset", "{", "}", "[", "]", "{}}", "[]]", "{} {}", '{"a":1,}', "[1,]", "[,1]",
  '{"a" 1}', '{a:1}', "{'a':1}", '{"a":1 "b":2}', '{"a":}', "[1 2]", '"abc', '"a\\x"', '"a\\u12G4"', '"a\\', '"\t"', '"a\nb"',
  "01", "-", "1.", ".5", "1e", "1e+", "+1", "NaN", "Infinity", "tru", "nul", "falsey", "truex", '{"a":1}x', "[1]]",
  '{"a":[1}', '["a"}', '{\\"a":1}', '["\\q"]', "[".repeat(600) + "]".repeat(599), '{"a":'.repeat(600) + "1" + "}".repeat(599),
];

describe("isJsonText", () => {
  it("takes what JSON.parse takes", () => {
    for (const s of VALID) expect([s.slice(0, 40), isJsonText(s)]).toEqual([s.slice(0, 40), true]);
  });

  it("refuses what JSON.parse refuses: a frame cut short, a proxy's words, trailing text", () => {
    for (const s of INVALID) expect([s.slice(0, 40), isJsonText(s)]).toEqual([s.slice(0, 40), false]);
  });

  it("agrees with JSON.parse on every cut and every one-character change of a chunk (compact, escaped, spaced)", () => {
    let checked = 0;
    for (const c of [CHUNK, ESCAPED, SPACED]) {
      for (let i = 0; i <= c.length; i++) {
        const changed = ['"', "\\", "{", "}", "[", "]", ",", ":", "x", "1", "e", "-", ".", " ", "\n", "\t"].map((ch) => c.slice(0, i) + ch + c.slice(i + 1));
        for (const s of [c.slice(0, i), c.slice(i), c.slice(0, i) + c.slice(i + 1), ...changed]) {
          expect([s, isJsonText(s)]).toEqual([s, parses(s)]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(19 * (CHUNK.length + ESCAPED.length + SPACED.length));
  });

  it("agrees with JSON.parse on random texts and random changes to them", () => {
    let seed = 7;
    const rand = (n: number) => { // mulberry32: the same texts every run
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (((t ^ (t >>> 14)) >>> 0) % n);
    };
    const value = (d: number): unknown => {
      switch (d === 0 ? 5 + rand(2) : rand(d > 3 ? 5 : 7)) {
        case 0: return rand(2) === 0;
        case 1: return null;
        case 2: return (rand(2000) - 1000) / [1, 10, 1000][rand(3)]! * 10 ** (rand(7) - 3);
        case 3: return ["", "a", 'q"uote', "back\\slash", "line\nfeed", "é\u2028😀", "tab\there"][rand(7)];
        case 4: return "x".repeat(rand(40));
        case 5: return Array.from({ length: rand(5) }, () => value(d + 1));
        default: return Object.fromEntries(Array.from({ length: rand(5) }, (_, k) => [`k${k}${"\"\\".slice(0, rand(3))}`, value(d + 1)]));
      }
    };
    const alphabet = ['"', "\\", "{", "}", "[", "]", ",", ":", "a", "0", "-", "e", ".", " ", "\n", "\t", "u"];
    let checked = 0;
    for (let t = 0; t < 400; t++) {
      const text = JSON.stringify(value(0), null, ["", " ", "\t"][rand(3)]);
      expect([text, isJsonText(text)]).toEqual([text, true]);
      for (let m = 0; m < 20; m++) {
        const at = rand(text.length + 1);
        const ch = alphabet[rand(alphabet.length)]!;
        const s = [text.slice(0, at) + ch + text.slice(at), text.slice(0, at) + text.slice(at + 1), text.slice(0, at) + ch + text.slice(at + 1)][rand(3)]!;
        expect([s, isJsonText(s)]).toEqual([s, parses(s)]);
        checked++;
      }
    }
    expect(checked).toBe(8000);
  });

  it("a raw control character in a string: refused when it is a tab or line feed; another (NUL) is not looked for unless the text has one", () => {
    expect(isJsonText('{"a":"x\ty"}')).toBe(false);
    expect(isJsonText('{"a":"x\ny"}')).toBe(false);
    expect(isJsonText('{"a":\n"x\u0000y"}')).toBe(false);
    expect(isJsonText('{"a":"x\\n\u0000y"}')).toBe(false); // read from the escape on
    expect(isJsonText('{"a":"x\u0000y"}')).toBe(true); // the speed's price (json-text.ts)
  });
});
