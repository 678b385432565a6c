// Citations in a Messages answer point into the documents the provider saw: with a document's values redacted, its
// cited_text holds placeholders and its char indices count the redacted text. Both are turned back to the client's
// document here: placeholders restored (in the document's title and a search result's title too), and
// start_char_index / end_char_index mapped through the redaction's edits to the original text.
import type { Edit, GuardRun } from "../check.ts";

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/**
 * A position in the redacted text as a position in the original. One inside a replacement widens to the whole
 * original value: a start to the value's start, an end to its end.
 */
export function toOriginal(edits: readonly Edit[], r: number, isEnd: boolean): number {
  let delta = 0; // redacted minus original, before the current edit
  for (const e of edits) {
    const rs = e.start + delta;
    if (r <= rs) break;
    if (r < rs + e.length) return isEnd ? e.end : e.start;
    delta += e.length - (e.end - e.start);
  }
  return r - delta;
}

/** One citation (a JSON answer's or a stream's citations_delta) turned back to the client's documents, in place. */
export function fixCitation(c: unknown, run: GuardRun): void {
  if (!isObj(c)) return;
  for (const k of ["cited_text", "document_title", "title"]) if (typeof c[k] === "string") c[k] = run.restore(c[k]);
  if (c.type !== "char_location" || typeof c.start_char_index !== "number" || typeof c.end_char_index !== "number") return;
  const doc = run.documents.get(c.document_index);
  const s = c.start_char_index, e = c.end_char_index;
  // Only a citation that quotes the redacted document at those offsets is remapped (anything else is not ours to move).
  if (!doc || run.restore(doc.redacted.slice(s, e)) !== c.cited_text) return;
  c.start_char_index = toOriginal(doc.edits, s, false);
  c.end_char_index = toOriginal(doc.edits, e, true);
  // The client's own text at the mapped span (a citation cutting a placeholder included), unless a value was masked.
  if (!doc.edits.some((x) => x.masked)) c.cited_text = doc.original.slice(c.start_char_index, c.end_char_index);
}

/** A JSON Messages answer's citations (on its text blocks). */
export function fixCitations(body: unknown, run: GuardRun): void {
  if (!isObj(body) || !Array.isArray(body.content)) return;
  for (const b of body.content) if (isObj(b) && Array.isArray(b.citations)) for (const c of b.citations) fixCitation(c, run);
}
