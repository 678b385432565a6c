// Text a stream builds up from its deltas, for the events that carry it whole at the end. `text += delta` keeps
// every delta plus a rope node per append until the end (about 8x the text for 4-character deltas, measured); the
// pieces here are joined a block at a time as they come, and the whole once, so what is held is about the text.

/** Pieces joined into one block string once there are this many. */
const BLOCK = 256;

export class TextPieces {
  private blocks: string[] = [];
  private pieces: string[] = [];
  private joined: string | undefined = "";
  /** Characters so far. */
  length = 0;

  append(s: string): void {
    this.pieces.push(s);
    this.length += s.length;
    this.joined = undefined;
    if (this.pieces.length === BLOCK) {
      this.blocks.push(this.pieces.join(""));
      this.pieces = [];
    }
  }

  /** The whole text (joined once, until more is appended). */
  toString(): string {
    if (this.joined === undefined) {
      this.blocks.push(this.pieces.join(""));
      this.pieces = [];
      this.joined = this.blocks.length === 1 ? this.blocks[0]! : this.blocks.join("");
      this.blocks = [this.joined];
    }
    return this.joined;
  }
}
