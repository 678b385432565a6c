// Gemini's sources as chat url_citation annotations: a grounded answer's groundingMetadata (googleSearch: each
// groundingSupports segment cites groundingChunks by index, web.uri and web.title) and citationMetadata (recited
// sources: citationSources on the Gemini API, citations on Vertex AI). Gemini's segment offsets count UTF-8 bytes of
// the answer text (its text parts, thoughts apart, as Google's citation example reads them); chat's count UTF-16 code
// units (JS string indexes), so they are converted against the text.
import { urlCitation, type UrlCitation } from "../url-citation.ts";

/** Whether a candidate carries any source (the only check made when it has none). */
export const citesSources = (c: any): boolean => !!(c?.groundingMetadata?.groundingSupports?.length || c?.citationMetadata);

/** The candidate's sources as annotations over `text`, the answer text so far. */
export function geminiAnnotations(c: any, text: string): UrlCitation[] {
  const spans: { url: string; title: unknown; start: number; end: number }[] = [];
  const g = c?.groundingMetadata;
  const chunks: any[] = Array.isArray(g?.groundingChunks) ? g.groundingChunks : [];
  for (const s of Array.isArray(g?.groundingSupports) ? g.groundingSupports : []) {
    const seg = s?.segment;
    for (const i of Array.isArray(s?.groundingChunkIndices) ? s.groundingChunkIndices : []) {
      const web = chunks[i]?.web;
      if (typeof web?.uri === "string") spans.push({ url: web.uri, title: web.title, start: byteOf(seg?.startIndex), end: byteOf(seg?.endIndex) });
    }
  }
  const m = c?.citationMetadata;
  const recited: any[] = Array.isArray(m?.citationSources) ? m.citationSources : Array.isArray(m?.citations) ? m.citations : [];
  for (const r of recited) if (typeof r?.uri === "string") spans.push({ url: r.uri, title: r.title, start: byteOf(r.startIndex), end: byteOf(r.endIndex) });
  // A span without an end (proto3 leaves a 0 out, and an empty span cites nothing) is no annotation.
  for (let i = spans.length - 1; i >= 0; i--) if (spans[i]!.end <= spans[i]!.start) spans.splice(i, 1);
  if (!spans.length) return [];
  const at = utf16Offsets(text, spans.flatMap((s) => [s.start, s.end]));
  return spans.map((s) => urlCitation(s.url, s.title, at.get(s.start)!, at.get(s.end)!));
}

/** A byte offset as Gemini sends it (proto3 leaves a 0 out). */
const byteOf = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/** UTF-8 byte offsets in `text` -> UTF-16 indexes (one walk for them all; an offset past the text is its end). */
export function utf16Offsets(text: string, bytes: number[]): Map<number, number> {
  const out = new Map<number, number>();
  let b = 0;
  let i = 0;
  for (const q of [...new Set(bytes)].sort((x, y) => x - y)) {
    while (i < text.length && b < q) {
      const u = text.charCodeAt(i);
      if (u < 0x80) { b += 1; i += 1; }
      else if (u < 0x800) { b += 2; i += 1; }
      else if (u >= 0xd800 && u < 0xdc00 && i + 1 < text.length) { b += 4; i += 2; }
      else { b += 3; i += 1; }
    }
    out.set(q, i);
  }
  return out;
}
