import { describe, expect, it } from "vitest";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { MAX_RUN_BYTES, boundedCount, countCooperatively, forEachPiece } from "./bpe-pieces.ts";

const raw = (s: string) => countTokens(s, { disallowedSpecial: new Set<string>() });
const pieces = (s: string) => {
  const out: string[] = [];
  forEachPiece(s, (p) => out.push(p));
  return out;
};
// The encoders' own pre-tokenizer patterns (tiktoken's, as gpt-tokenizer has them): what the quadratic merge sees.
const CONTRACTION = String.raw`'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])`;
const SPLITS = {
  o200k_base: new RegExp(String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:${CONTRACTION})?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:${CONTRACTION})?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`, "gu"),
  cl100k_base: new RegExp(String.raw`${CONTRACTION}|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`, "gu"),
};
/** The longest piece (UTF-8 bytes) either encoder's pre-tokenizer makes of `s`: what its merge is quadratic in. */
function longestEncoderPiece(s: string): number {
  let best = 0;
  for (const re of Object.values(SPLITS)) for (const m of s.match(re) ?? []) best = Math.max(best, Buffer.byteLength(m));
  return best;
}

let seed = 11;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const randomOf = (alphabet: string[], n: number) => Array.from({ length: n }, () => alphabet[rnd(alphabet.length)]).join("");
const letters = [..."abcdefghijklmnopqrstuvwxyz"];
const cjk = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(0x4e00 + i));
const emoji = Array.from({ length: 80 }, (_, i) => String.fromCodePoint(0x1f600 + i));
const PROSE = "The gateway translates a Messages request into chat completions, and counts each message with the model's own " +
  "encoding. Code: function add(a, b) { return a + b; } // 42 — naïve café 東京 🙂\n\n  indented\tline, then   spaces.\r\n";

describe("forEachPiece", () => {
  it("hands over all of the text, in order, no encoder piece past MAX_RUN_BYTES and no surrogate pair split", () => {
    const inputs = [
      "", "a", PROSE.repeat(200), "a".repeat(131_072), " ".repeat(10_000), "\n".repeat(10_000), randomOf(cjk, 5000), randomOf(emoji, 3000),
      `x${"🙂".repeat(100)}`, randomOf(["a", "é", "🙂", "東", " "], 20_000),
      // o200k_base's punctuation piece takes any run of \r, \n and / after it: spaces and non-spaces alternating.
      `!${"\n/".repeat(20_000)}`, `!${"/\r\n".repeat(10_000)}`, randomOf(["\n", "/", "!", "\r", "\t", "a", "1"], 20_000),
    ];
    for (const text of inputs) {
      const ps = pieces(text);
      expect(ps.join("") === text).toBe(true);
      for (const p of ps) {
        expect(longestEncoderPiece(p), JSON.stringify(p.slice(0, 20))).toBeLessThanOrEqual(MAX_RUN_BYTES);
        expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p), "a piece starts or ends inside a surrogate pair").toBe(false);
      }
    }
  });

  it("ordinary text is counted exactly as the encoder counts it whole", () => {
    const text = PROSE.repeat(300);
    expect(pieces(text).length).toBeGreaterThan(1); // sliced between words
    expect(boundedCount(raw)(text)).toBe(raw(text));
  });

  it("long runs are counted within 1% of the encoder's figure", () => {
    for (const text of ["a".repeat(8192), randomOf(letters, 8192), Buffer.from(randomOf(letters, 6000)).toString("base64"), randomOf(cjk, 4000)]) {
      const exact = raw(text);
      expect(Math.abs(boundedCount(raw)(text) - exact) / exact).toBeLessThan(0.01);
    }
  });
});

describe("countCooperatively", () => {
  it("gives the event loop turns while it counts a large text, and agrees with the synchronous count", async () => {
    const text = randomOf(letters, 256 * 1024);
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    try {
      const n = await countCooperatively([text, PROSE], raw);
      expect(n).toBe(boundedCount(raw)(text) + boundedCount(raw)(PROSE));
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it("stops once the request is aborted", async () => {
    const ac = new AbortController();
    const counting = countCooperatively([randomOf(letters, 512 * 1024)], raw, ac.signal);
    setImmediate(() => ac.abort(new Error("client left")));
    await expect(counting).rejects.toThrow("client left");
  });
});
