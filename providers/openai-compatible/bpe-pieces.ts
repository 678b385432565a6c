// Keeps the local BPE count linear in its input (issue 25: 128 KiB of "a" held the event loop for 10 s). The encoder
// splits text into pieces with its regex, then merges each piece in time quadratic in its bytes; a run of letters,
// CJK, punctuation, spaces — or of newlines and slashes after a punctuation mark, in o200k_base — is one piece
// however long. The encoder starts a new piece at every space that follows a non-space (no pattern carries a space
// after its first character), so the pieces never span such a "word gap". Here text is cut at word gaps (exact:
// the encoder would have split there anyway), and wherever more than MAX_RUN_BYTES of UTF-8 pass without one the
// text is cut regardless: no piece the encoder sees is longer. Ordinary prose has a word gap every few characters,
// so its count is exact; a long unspaced stretch (base64, minified code, unspaced CJK) is counted in 64-byte pieces,
// within a token per cut of the encoder's own figure (under 1% in bpe-pieces.test.ts).
// Cost per byte is then bounded (bench/tokenizer.bench.ts, merge cache cold: ~0.05 µs on prose, ~1 µs on the worst
// stretches, unspaced CJK), and countCooperatively yields to the event loop every YIELD_MS, so a large count never
// holds other requests for long.

/** Longest stretch (in UTF-8 bytes) without a word gap handed to the encoder in one piece. */
export const MAX_RUN_BYTES = 64;
/** Longer stretches of ordinary text are handed over in slices of about this many characters, cut at word gaps. */
export const SLICE_CHARS = 4096;
/** The async count gives the event loop a turn at least this often. */
export const YIELD_MS = 8;

/** JavaScript's \s (what the encoders' regexes mean by it), ASCII first: the common case costs two comparisons. */
const isSpace = (c: number) =>
  c < 0xa0 ? c === 32 || (c >= 9 && c <= 13) :
  c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
  c === 0x205f || c === 0x3000 || c === 0xfeff;

/** UTF-8 bytes of one UTF-16 unit (a surrogate half counts 2, a pair 4). */
const bytesOf = (c: number) => (c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3);

/**
 * Calls `piece` with consecutive pieces of `text` (together, all of it): cut at word gaps every SLICE_CHARS or so,
 * and anywhere (but inside a surrogate pair) once MAX_RUN_BYTES pass without a word gap.
 */
export function forEachPiece(text: string, piece: (s: string) => void, maxRun = MAX_RUN_BYTES): void {
  const n = text.length;
  let start = 0;
  /** UTF-8 bytes since the last word gap or cut. */
  let stretch = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 && i > 0 && !isSpace(text.charCodeAt(i - 1))) {
      // A word gap: the encoder starts a piece here.
      if (i - start >= SLICE_CHARS) {
        piece(text.slice(start, i));
        start = i;
      }
      stretch = 1;
      continue;
    }
    stretch += bytesOf(c);
    if (stretch <= maxRun) continue;
    // Cut before this character, never between the two halves of a surrogate pair.
    const cut = c >= 0xdc00 && c <= 0xdfff && i - 1 > start ? i - 1 : i;
    piece(text.slice(start, cut));
    start = cut;
    stretch = cut === i ? bytesOf(c) : 4;
  }
  if (start < n) piece(start === 0 ? text : text.slice(start));
}

/** A count over pieces: linear, but it holds the event loop for the whole text (small texts, benches, tests). */
export function boundedCount(count: (s: string) => number): (text: string) => number {
  return (text) => {
    let total = 0;
    forEachPiece(text, (p) => {
      total += count(p);
    });
    return total;
  };
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The count of many texts, giving the event loop a turn every YIELD_MS: however large the request, no other request
 * waits on it for longer than that (plus one piece). Stops, throwing the signal's reason, once `signal` aborts.
 */
export async function countCooperatively(texts: string[], count: (s: string) => number, signal?: AbortSignal): Promise<number> {
  let total = 0;
  let since = performance.now();
  const pieces: string[] = [];
  const collect = (p: string) => void pieces.push(p);
  for (const text of texts) {
    forEachPiece(text, collect);
    for (let i = 0; i < pieces.length; i++) {
      total += count(pieces[i]!);
      if ((i & 15) === 15 && performance.now() - since >= YIELD_MS) {
        await yieldToLoop();
        signal?.throwIfAborted();
        since = performance.now();
      }
    }
    pieces.length = 0;
  }
  return total;
}
