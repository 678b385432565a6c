// Text features shared by the simulated embeddings and reranker: lower-cased word stems plus character
// trigrams, so related texts (shared words, inflections, typos) overlap and unrelated ones do not.

export function words(text: string): string[] {
  return (text.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
}

/** A light suffix stripper: enough for "cats"/"cat" and "running"/"run" to meet. */
export function stem(w: string): string {
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3).replace(/(.)\1$/, "$1");
  if (w.length > 4 && w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && w.endsWith("es") && /(s|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  return w;
}

export function trigrams(word: string): string[] {
  const padded = ` ${word} `;
  const out: string[] = [];
  for (let i = 0; i + 3 <= padded.length; i++) out.push(padded.slice(i, i + 3));
  return out;
}

/** 32-bit FNV-1a. */
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const STOP = new Set(["the", "a", "an", "of", "to", "in", "and", "or", "is", "are", "wa", "for", "on", "with", "what", "which", "how", "do", "doe", "it", "thi", "that", "at", "by", "be"]);

export function isStopword(w: string): boolean {
  return STOP.has(w);
}
