// Keeps the local BPE count linear in its input (issue 25: 128 KiB of "a" held the event loop for 10 s). The encoder
// merges each pre-tokenized piece in time quadratic in its bytes, and a run of letters, CJK, punctuation or spaces is
// one piece however long. So no run of non-space (or of space) characters reaches it longer than MAX_RUN_BYTES of
// UTF-8: longer runs are cut. Ordinary words are far shorter, so their count is exact; a cut run (base64, minified
// code, unspaced CJK) is counted piece by piece, within a token per cut of the encoder's own figure (under 1% on
// random letters, base64 and CJK in bpe-pieces.test.ts).
// Cost per byte is then bounded (bench/tokenizer.bench.ts, merge cache cold: ~0.05 µs on prose, ~1 µs on the worst
// runs, unspaced CJK), and countCooperatively yields to the event loop every YIELD_MS, so a large count never holds
// other requests for long.

/** Longest run (in UTF-8 bytes) of non-space, or of space, characters handed to the encoder in one piece. */
export const MAX_RUN_BYTES = 64;
/** Longer stretches of ordinary text are handed over in slices of about this many characters, cut between words. */
export const SLICE_CHARS = 4096;
/** The async count gives the event loop a turn at least this often. */
export const YIELD_MS = 8;

const isSpace = (c: number) =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x85 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;

/** UTF-8 bytes of one UTF-16 unit (a surrogate half counts 2, a pair 4). */
const bytesOf = (c: number) => (c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3);

/**
 * Calls `piece` with consecutive pieces of `text` (together, all of it): none holds a run past `maxRun` bytes, and
 * ordinary text comes in slices of about SLICE_CHARS cut at a single space between two words — where no piece of
 * the encoder's own split spans, so those cuts change nothing.
 */
export function forEachPiece(text: string, piece: (s: string) => void, maxRun = MAX_RUN_BYTES): void {
  const n = text.length;
  let start = 0;
  let run = 0;
  let runSpace = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const space = isSpace(c);
    if (space !== runSpace) {
      runSpace = space;
      run = bytesOf(c);
      // A word gap far enough on: hand over the slice before it.
      if (c === 32 && i - start >= SLICE_CHARS && i + 1 < n && !isSpace(text.charCodeAt(i + 1))) {
        piece(text.slice(start, i));
        start = i;
      }
      continue;
    }
    run += bytesOf(c);
    if (run <= maxRun) continue;
    // Cut before this character, never between the two halves of a surrogate pair.
    const cut = c >= 0xdc00 && c <= 0xdfff && i - 1 > start ? i - 1 : i;
    piece(text.slice(start, cut));
    start = cut;
    run = cut === i ? bytesOf(c) : 4;
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
