// Gemini's sources as chat url_citation annotations: a grounded answer's groundingMetadata (googleSearch: each
// groundingSupports segment cites groundingChunks by index, web.uri and web.title) and citationMetadata (recited
// sources: citationSources on the Gemini API, citations on Vertex AI). Gemini's segment offsets count UTF-8 bytes of
// the answer text (its text parts, thoughts apart, as Google's citation example reads them); chat's count UTF-16 code
// units (JS string indexes), so they are converted against the whole text once it is in (utf16-index.ts). An answer
// keeps one annotation per URL and span, the first MAX_ANNOTATIONS of them (a stream's chunks may each cite again what
// came before: what is kept stays bounded), the same in a JSON answer and a stream.
import { urlCitation, type UrlCitation } from "../url-citation.ts";
import type { Utf16Index } from "./utf16-index.ts";

/** The most annotations one answer (a candidate) keeps: its first distinct sources and spans. */
export const MAX_ANNOTATIONS = 256;

/** Whether a candidate carries any source (the only check made when it has none). */
export const citesSources = (c: any): boolean => !!(c?.groundingMetadata?.groundingSupports?.length || c?.citationMetadata);

interface Source { url: string; title: unknown; start: number; end: number }

/** One answer's sources, gathered from the candidates (or a stream's chunks) that carry them. */
export class GeminiSources {
  private readonly sources: Source[] = [];
  private readonly seen = new Set<string>();

  get size(): number {
    return this.sources.length;
  }

  /** The candidate's sources (byte spans, kept until the text they count in is whole). */
  add(c: any): void {
    const g = c?.groundingMetadata;
    const chunks: unknown[] = Array.isArray(g?.groundingChunks) ? g.groundingChunks : [];
    for (const s of Array.isArray(g?.groundingSupports) ? g.groundingSupports : []) {
      const seg = s?.segment;
      for (const i of Array.isArray(s?.groundingChunkIndices) ? s.groundingChunkIndices : []) {
        // An index is an integer number: a string "0" is no index (chunks["0"] would read it as one).
        const web = Number.isInteger(i) && i >= 0 && i < chunks.length ? (chunks[i] as any)?.web : undefined;
        if (typeof web?.uri === "string") this.cite(web.uri, web.title, seg?.startIndex, seg?.endIndex);
      }
    }
    const m = c?.citationMetadata;
    const recited: any[] = Array.isArray(m?.citationSources) ? m.citationSources : Array.isArray(m?.citations) ? m.citations : [];
    for (const r of recited) if (typeof r?.uri === "string") this.cite(r.uri, r.title, r.startIndex, r.endIndex);
  }

  /** The sources as annotations over `text`, the answer text. */
  annotations(text: Utf16Index): UrlCitation[] {
    return this.sources.map((s) => urlCitation(s.url, s.title, text.at(s.start), text.at(s.end)));
  }

  private cite(url: string, title: unknown, startByte: unknown, endByte: unknown): void {
    if (this.sources.length >= MAX_ANNOTATIONS) return;
    const start = byteOf(startByte), end = byteOf(endByte);
    // A span without an end (proto3 leaves a 0 out, and an empty span cites nothing) is no annotation.
    if (end <= start) return;
    const key = `${start}:${end}:${url}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.sources.push({ url, title, start, end });
  }
}

/** A byte offset as Gemini sends it (proto3 leaves a 0 out). */
const byteOf = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
