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
