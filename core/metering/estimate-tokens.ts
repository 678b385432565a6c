// A tokenizer-free estimate of how many tokens a text costs, used to reject over-long embedding inputs before
// any upstream call and to report usage where an upstream does not. Errs slightly high: words, punctuation, long
// runs of letters (≈4 characters per token) and CJK characters (one each) are all counted.

const PIECE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}_']+|[^\s\p{L}\p{N}_']/gu;

export function estimateTokens(text: string): number {
  let n = 0;
  PIECE.lastIndex = 0;
  for (let m = PIECE.exec(text); m; m = PIECE.exec(text)) {
    const len = m[0].length;
    n += len > 6 ? Math.ceil(len / 4) : 1;
  }
  return n;
}

/** Longest text estimated whole; longer texts are sampled (estimateTokensBounded). */
const WHOLE = 64 * 1024;
const WINDOWS = 16;
const WINDOW = 4096;

/**
 * estimateTokens in bounded time for a text of any length (an upstream's answer is not the gateway's to size): up to
 * 64 Ki characters it is estimateTokens; past that, 16 windows of 4 Ki spread over the text are estimated and scaled
 * to its length (a window cut mid-word counts the word twice: it errs high, as the estimate should).
 */
export function estimateTokensBounded(text: string): number {
  if (text.length <= WHOLE) return estimateTokens(text);
  const step = Math.floor((text.length - WINDOW) / (WINDOWS - 1));
  let n = 0;
  for (let i = 0; i < WINDOWS; i++) n += estimateTokens(text.slice(i * step, i * step + WINDOW));
  return Math.ceil((n * text.length) / (WINDOWS * WINDOW));
}
