// How much of the answer a relayed Responses stream has carried, as its final event will carry it: every finished
// item at the size of its output_item.done event, and the item still open at its output_item.added event's size and
// its deltas' text. Deltas are measured where they lie in the event's JSON (never parsed: the relay reads no delta,
// for its CPU per event), and only once they could matter: while the delta events' own sizes, an upper bound of their
// text, cannot take the answer past the bound, they are not scanned at all (bench/responses-stream.bench.ts). So an
// answer within the bound is never cut, and a runaway one is cut once its scanned deltas alone pass it: after at most
// about twice the bound's text (the unscanned events carried at most the bound). The events that repeat text when a
// part or item finishes (output_text.done, content_part.done, function_call_arguments.done, reasoning *.done, and
// their *.added) are counted apart, up to twice the bound: an answer's own repeat its text about twice
// (output_text.done and content_part.done), so they cut none within the bound, and an upstream that sends them
// without end (its text in no delta) is cut after about twice the bound in them. Each counts its text (measured where it
// lies, as a delta is; these events are one or two per part or item) and whatever else it carries past ENVELOPE
// characters, not its envelope (type, sequence number, ids), which an answer's own carry beside the text its
// output_item.done counts once: counted, a summary in many short parts (three such events each) would be cut well
// within the bound.
import type { AnswerBound } from "../answer-bound.ts";

/** Characters of an event's `"delta"` string as sent (JSON escapes included); 0 when it has none. */
export function deltaChars(data: string, from = 0): number {
  // Compact JSON, as OpenAI sends it, first, looked for after `from` (past the event's type: the relay's CPU per event
  // is measured in bench/responses-stream.bench.ts); a pattern not beginning with a quote, JSON's commonest
  // character, is found in well under half the time.
  let start = data.indexOf('delta":"', from);
  if (start === -1 && from > 0) start = data.indexOf('delta":"');
  if (start > 0 && data.charCodeAt(start - 1) === 34) start += 8;
  else {
    const key = data.indexOf('"delta"');
    if (key === -1) return 0;
    let i = key + 7;
    for (; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 34) break; // the value's opening quote
      if (c !== 58 && c !== 32 && c !== 9 && c !== 10 && c !== 13) return 0; // not a string value
    }
    start = i + 1;
  }
  return stringChars(data, start);
}

/**
 * Characters of an event's `"<key>"` string as sent (JSON escapes included), wherever it lies (a repeat event's text
 * is in `part` for content_part and summary_part events); 0 when it has none. A `"` inside a JSON string is escaped,
 * so `"key":"` found in compact JSON is a key, never text.
 */
export function fieldChars(data: string, key: string): number {
  const compact = `"${key}":"`;
  let start = data.indexOf(compact);
  if (start !== -1) return stringChars(data, start + compact.length);
  const name = data.indexOf(`"${key}"`);
  if (name === -1) return 0;
  let i = name + key.length + 2;
  for (; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 34) break; // the value's opening quote
    if (c !== 58 && c !== 32 && c !== 9 && c !== 10 && c !== 13) return 0; // not a string value
  }
  return stringChars(data, i + 1);
}

/** Characters of the JSON string whose text begins at `start`, up to its closing quote (the rest when it has none). */
function stringChars(data: string, start: number): number {
  let end = data.indexOf('"', start);
  // A quote preceded by an odd number of backslashes is part of the text.
  while (end !== -1) {
    let b = end - 1;
    while (b >= start && data.charCodeAt(b) === 92) b--;
    if ((end - 1 - b) % 2 === 0) break;
    end = data.indexOf('"', end + 1);
  }
  return end === -1 ? Math.max(0, data.length - start) : end - start;
}

/** The key of the text a repeat event carries: `arguments`, `code`, `input`, `refusal`, else `text` (or `part.text`). */
function repeatedKey(type: string): string {
  if (type.endsWith("arguments.done")) return "arguments";
  if (type.endsWith("_code.done")) return "code";
  if (type.endsWith("_input.done")) return "input";
  if (type.includes("refusal")) return "refusal";
  return "text";
}

/**
 * What a repeat event may carry beside its text uncounted: its envelope (type, sequence number, ids; an OpenAI one's
 * is 100-230 characters). What passes it (logprobs, annotations, a text under another key) counts.
 */
const ENVELOPE = 256;

export class RelayedAnswer {
  /** Added items and delta characters since the last item finished: counted already when its output_item.done comes. */
  private open = 0;
  /**
   * The sizes of the delta events not scanned, more than their text. Never taken back, not even by the done of their
   * item: a done smaller than its deltas (a hostile upstream's) would otherwise let unscanned text through without end.
   */
  private unscanned = 0;
  /** The text of the events that repeat it as a part or item finishes (*.done, *.added but output items'). */
  private repeated = 0;

  constructor(private readonly bound: AnswerBound) {}

  /** Counts the event `type` (its JSON `data`); throws answer_too_large past the bound, before it is relayed. */
  note(type: string | undefined, data: string): void {
    if (type === undefined) return;
    if (type.endsWith(".delta")) {
      if (this.bound.size + this.unscanned + data.length <= this.bound.limit) {
        this.unscanned += data.length;
        return;
      }
      // OpenAI's events begin {"type":"<type>", and the delta comes after.
      const n = deltaChars(data, type.length + 10);
      this.open += n;
      this.bound.add(n);
    } else if (type === "response.output_item.added") {
      // Kept whole until its done comes (core/responses/response-so-far.ts): an upstream that only ever adds items (large ones,
      // never done) is bounded by them.
      this.open += data.length;
      this.bound.add(data.length);
    } else if (type === "response.output_item.done") {
      this.bound.add(Math.max(0, data.length - this.open));
      this.open = 0;
    } else if (type.endsWith(".done") || type.endsWith(".added")) {
      // Its text, however short: a summary in many short parts has three of these per part, which counted at their
      // envelopes' size would cut an answer well within the bound.
      this.repeated += Math.max(fieldChars(data, repeatedKey(type)), data.length - ENVELOPE);
      // Past twice the bound: refused as the answer past the bound is (the same error, naming the same setting).
      if (this.repeated > 2 * this.bound.limit) this.bound.add(this.bound.limit + 1);
    }
  }
}
