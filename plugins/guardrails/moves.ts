// Where a position in answer text lands once the guardrails changed the text (an output rule's mask, a placeholder
// restored): the answer's url_citation annotations (chat's and Responses') index into the text as the upstream wrote
// it, and the client must find them in the text it gets. A text passes two stages in order (output rules, then
// placeholders restored); each stage's edits are logged as it goes (a stream's slot adds them chunk by chunk).

/** One edit of a stage: the span [start, end) of its input became `length` characters of its output. */
export type OnEdit = (start: number, end: number, length: number) => void;

/** One stage's edits, in order, and how a position in its input moves to its output. */
export class EditLog {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Output minus input after each edit. */
  private readonly shifts: number[] = [];

  get size(): number {
    return this.starts.length;
  }

  /** Edits come in order and do not overlap. */
  readonly add: OnEdit = (start, end, length) => {
    this.starts.push(start);
    this.ends.push(end);
    this.shifts.push((this.shifts.at(-1) ?? 0) + length - (end - start));
  };

  /**
   * Input position `p` in the output. One inside a replaced span goes to the replacement's start (a start) or end
   * (an end): a citation of part of a masked value cites the whole mask.
   */
  move(p: number, isEnd: boolean): number {
    // The last edit starting before p.
    let lo = 0, hi = this.starts.length - 1, k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! < p) (k = mid), (lo = mid + 1);
      else hi = mid - 1;
    }
    if (k < 0) return p;
    const before = k ? this.shifts[k - 1]! : 0;
    if (p < this.ends[k]!) return isEnd ? this.ends[k]! + this.shifts[k]! : this.starts[k]! + before;
    return p + this.shifts[k]!;
  }
}

/** Both stages of one text: output rules (masks), then placeholders restored. */
export class TextMoves {
  readonly masks = new EditLog();
  readonly restores = new EditLog();

  get size(): number {
    return this.masks.size + this.restores.size;
  }

  /** Where position `p` of the upstream's text is in the client's, never past `length` (the client's text so far). */
  move(p: number, isEnd: boolean, length: number): number {
    return Math.min(length, Math.max(0, this.restores.move(this.masks.move(p, isEnd), isEnd)));
  }
}

import { checkUrlCitationSources } from "./walk/url-citation-sources.ts";

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/**
 * The url_citation annotations in `annotations` moved by `move` (in place), in chat's shape ({type, url_citation:
 * {start_index, end_index}}) or Responses' (start_index, end_index on the annotation itself). Whether any moved.
 */
export function moveUrlCitations(annotations: unknown, move: (p: number, isEnd: boolean) => number): boolean {
  if (!Array.isArray(annotations)) return false;
  let moved = false;
  for (const a of annotations) {
    if (!isObj(a) || a.type !== "url_citation") continue;
    const c = isObj(a.url_citation) ? a.url_citation : a;
    if (typeof c.start_index !== "number" || typeof c.end_index !== "number") continue;
    const start = move(c.start_index, false), end = move(c.end_index, true);
    if (start !== c.start_index || end !== c.end_index) (c.start_index = start), (c.end_index = end), (moved = true);
  }
  return moved;
}

/** The furthest end_index of `annotations`' url_citations (what must have reached the client before they may). */
export function citedEnd(annotations: readonly unknown[]): number {
  let end = 0;
  for (const a of annotations) {
    if (!isObj(a)) continue;
    const c = isObj(a.url_citation) ? a.url_citation : a;
    if (typeof c.end_index === "number" && c.end_index > end) end = c.end_index;
  }
  return end;
}

/**
 * Answer text through the output check (`output`), the url_citation annotations indexing into it moved along, their
 * titles and urls checked as the text is.
 */
export function citedOutput(text: string, annotations: unknown, output: (text: string, moves?: TextMoves) => string): string {
  const moves = new TextMoves();
  const out = output(text, moves);
  moveUrlCitations(annotations, (p, isEnd) => moves.move(p, isEnd, out.length));
  checkUrlCitationSources(annotations, (t) => output(t));
  return out;
}
