// What a detector is: a global regular expression that finds candidates, and a check that keeps the real ones.
export type DetectorKind = "email" | "phone" | "card" | "iban" | "national_id" | "secret" | "ip";

export interface Detector {
  /** The built-in kind; absent for a rule's own patterns and keywords. */
  kind?: DetectorKind;
  /** The name a placeholder or mask shows: [EMAIL_1], [REDACTED:EMAIL]. */
  label: string;
  /** Global (`g`): candidates, left to right. */
  re: RegExp;
  /** Keeps a candidate (check digits, entropy); absent: every candidate counts. */
  valid?(match: string): boolean;
  /** A character every match contains: text without it is skipped without running the expression. */
  hint?: string;
}

/** A matched stretch of text: [start, end), and what it is. */
export interface Span {
  start: number;
  end: number;
  label: string;
}

/** Every valid match of `d` in `text`, appended to `out`. */
export function findAll(d: Detector, text: string, out: Span[]): void {
  if (d.hint !== undefined && text.indexOf(d.hint) < 0) return;
  const re = d.re;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (!d.valid || d.valid(m[0])) out.push({ start: m.index, end: m.index + m[0].length, label: d.label });
  }
}
