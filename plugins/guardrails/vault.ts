// Reversible redaction for one request: each distinct value becomes a placeholder ([EMAIL_1], [CARD_2]) in what leaves,
// and placeholders in the answer become the values again. The same value always gets the same placeholder, so the model
// can refer to it consistently; the values never leave the process and are forgotten with the request.

/** What a placeholder looks like: a bracketed label and a number. */
// A label is a rule name upper-cased (compile.ts labelOf), which may begin with a digit ("2fa-codes" -> 2FA_CODES).
const PLACEHOLDER = /\[([A-Z0-9][A-Z0-9_]{0,63})_(\d{1,9})\]/g;

export class Vault {
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  /** The longest placeholder handed out: what a stream may have to hold back while one is cut in two. */
  longest = 0;

  get size(): number {
    return this.byPlaceholder.size;
  }

  placeholder(label: string, value: string): string {
    let p = this.byValue.get(value);
    if (p) return p;
    const n = (this.counters.get(label) ?? 0) + 1;
    this.counters.set(label, n);
    p = `[${label}_${n}]`;
    this.byValue.set(value, p);
    this.byPlaceholder.set(p, value);
    if (p.length > this.longest) this.longest = p.length;
    return p;
  }

  /**
   * Every placeholder of this request in `text` replaced by its value (others, the model's own brackets, stay).
   * `json`: the text is inside a JSON string being streamed (tool arguments), so the value goes in escaped.
   * `onEdit`: told each placeholder replaced (its span in `text`, the value's length).
   */
  restore(text: string, json = false, onEdit?: (start: number, end: number, length: number) => void): string {
    if (this.byPlaceholder.size === 0 || text.indexOf("[") < 0) return text;
    return text.replace(PLACEHOLDER, (p: string, _label: string, _n: string, at: number) => {
      const v = this.byPlaceholder.get(p);
      if (v === undefined) return p;
      const out = json ? JSON.stringify(v).slice(1, -1) : v;
      onEdit?.(at, at + p.length, out.length);
      return out;
    });
  }

  /**
   * Every placeholder of this request in `text` replaced by the mask of its kind ([EMAIL_1] -> [REDACTED:EMAIL]): how
   * text that outlives the request is kept (a stored response), where the number means nothing and the value must not be.
   */
  mask(text: string): string {
    if (this.byPlaceholder.size === 0 || text.indexOf("[") < 0) return text;
    return text.replace(PLACEHOLDER, (p, label: string) => (this.byPlaceholder.has(p) ? `[REDACTED:${label}]` : p));
  }

  /**
   * Where a placeholder may have begun but not ended at the end of `text`: the index of that `[`, or text.length. A
   * stream keeps the text from there until the next chunk says whether it is a placeholder. Only a tail that is the
   * start of a placeholder actually handed out counts, so ordinary brackets are held for no longer than one check.
   * Called on every streamed delta: it costs the tail times the labels, never the placeholders (a request may hold
   * 100 000 of them, and the answer may be full of "[").
   */
  partialTail(text: string): number {
    if (this.byPlaceholder.size === 0) return text.length;
    const from = Math.max(0, text.length - this.longest + 1);
    for (let i = text.lastIndexOf("[", text.length - 1); i >= from; i = text.lastIndexOf("[", i - 1)) {
      const tail = text.slice(i);
      for (const [label, given] of this.counters) if (beginsPlaceholder(tail, label, given)) return i;
      if (i === 0) break;
    }
    return text.length;
  }
}

/**
 * Whether `tail` ("[" and what followed it) is the start, and not the whole, of one of [label_1] .. [label_given]: read
 * from the grammar, as the numbers handed out for a label are exactly 1 to `given`.
 */
export function beginsPlaceholder(tail: string, label: string, given: number): boolean {
  const rest = tail.length - 1;
  if (rest <= label.length) return label.startsWith(tail.slice(1));
  if (!tail.startsWith(label, 1) || tail[label.length + 1] !== "_") return false;
  const digits = tail.slice(label.length + 2);
  if (!digits) return true;
  if (!/^[1-9][0-9]*$/.test(digits)) return false;
  // A prefix of some number up to `given` is one no greater than it (the smallest number it begins is itself).
  const max = String(given);
  return digits.length < max.length || (digits.length === max.length && digits <= max);
}
