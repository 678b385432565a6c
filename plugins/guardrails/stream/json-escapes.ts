// JSON text streamed as text (tool-call arguments) read the way its parser will: `\u0047` is "G", `\"` is a quote.
// Output rules must see what the client's JSON.parse will see, or an escape hides a key from them; what they match is
// then masked in the raw text, so each decoded character keeps the raw offset it came from.

/** `text` decoded; `map[i]` is the raw offset of character i, `map[text.length]` the raw end (`end`). */
export interface Decoded {
  text: string;
  /** Undefined when the raw text had no backslash: the text is the raw text, offsets are the same. */
  map: number[] | undefined;
  /** Raw characters decoded: all of them, less an escape cut at the end that the next chunk completes. */
  end: number;
}

const SIMPLE: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * `raw` with its JSON escapes decoded. Unless `final`, an escape cut at the end (`\`, `\u00`) is left undecoded for
 * the next chunk to complete; a backslash that starts no valid escape stays as it is.
 */
export function decodeEscapes(raw: string, final: boolean): Decoded {
  let next = raw.indexOf("\\");
  if (next === -1) return { text: raw, map: undefined, end: raw.length };
  let text = "", at = 0;
  const map: number[] = [];
  while (next !== -1) {
    // The run before the backslash, as it is.
    text += raw.slice(at, next);
    for (let k = at; k < next; k++) map.push(k);
    at = next;
    const e = raw[at + 1];
    let len = 0, ch = "\\";
    if (e === undefined) {
      if (!final) break;
    } else if (e === "u") {
      const hex = raw.slice(at + 2, at + 6);
      if (HEX4.test(hex)) (ch = String.fromCharCode(parseInt(hex, 16))), (len = 6);
      else if (!final && at + 6 > raw.length && /^[0-9a-fA-F]*$/.test(hex)) break; // the rest is in the next chunk
    } else if (SIMPLE[e] !== undefined) (ch = SIMPLE[e]!), (len = 2);
    text += ch;
    map.push(at);
    at += len || 1;
    next = raw.indexOf("\\", at);
  }
  if (next === -1) {
    text += raw.slice(at);
    for (let k = at; k < raw.length; k++) map.push(k);
    at = raw.length;
  }
  map.push(at);
  return { text, map, end: at };
}
