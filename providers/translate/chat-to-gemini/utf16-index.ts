// Gemini counts offsets in its answer text in UTF-8 bytes, chat in UTF-16 code units (JS string indexes). A stream's
// text grows chunk by chunk and a grounding support may point anywhere in it, so the text is indexed as it comes: each
// character is measured once, on append, with a checkpoint (byte, index) at each piece's start and every STRIDE code
// units; an offset is found from the nearest checkpoint before it, a walk of at most STRIDE. Converting then costs the
// text's length once plus a constant per offset, however many chunks cite how much of it.

const STRIDE = 64;

export class Utf16Index {
  private readonly pieces: string[] = [];
  /** Checkpoints, in order: byte offset, UTF-16 index, piece, index in the piece. */
  private readonly cpByte: number[] = [];
  private readonly cpUnit: number[] = [];
  private readonly cpPiece: number[] = [];
  private readonly cpAt: number[] = [];
  /** UTF-8 bytes and UTF-16 code units of the text so far. */
  bytes = 0;
  units = 0;

  append(text: string): void {
    if (!text) return;
    const p = this.pieces.push(text) - 1;
    let since = STRIDE;
    for (let i = 0; i < text.length; ) {
      if (since >= STRIDE) {
        this.cpByte.push(this.bytes), this.cpUnit.push(this.units), this.cpPiece.push(p), this.cpAt.push(i);
        since = 0;
      }
      const [b, u] = width(text, i);
      this.bytes += b;
      this.units += u;
      i += u;
      since += u;
    }
  }

  /** The UTF-16 index of UTF-8 byte offset `byte` (one inside a character: after it; past the text: its end). */
  at(byte: number): number {
    if (byte <= 0) return 0;
    if (byte >= this.bytes) return this.units;
    let lo = 0, hi = this.cpByte.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.cpByte[mid]! <= byte) lo = mid;
      else hi = mid - 1;
    }
    const text = this.pieces[this.cpPiece[lo]!]!;
    let b = this.cpByte[lo]!, u = this.cpUnit[lo]!, i = this.cpAt[lo]!;
    while (i < text.length && b < byte) {
      const [wb, wu] = width(text, i);
      b += wb;
      u += wu;
      i += wu;
    }
    return u;
  }
}

/** The UTF-8 bytes and UTF-16 code units of the character at `i`. */
function width(text: string, i: number): [number, number] {
  const c = text.charCodeAt(i);
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) return [4, 2];
  return [3, 1];
}
