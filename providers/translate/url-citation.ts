// A web source as chat's url_citation annotation (OpenAI's shape for web search results: message.annotations, or
// delta.annotations in a stream), made by the translators whose upstreams cite sources their own way (Claude's
// citations, Gemini's grounding). Offsets are in the chat content's UTF-16 code units: JS string indexes, as OpenAI counts.

export interface UrlCitation {
  type: "url_citation";
  url_citation: { start_index: number; end_index: number; url: string; title: string };
}

export function urlCitation(url: string, title: unknown, start: number, end: number): UrlCitation {
  return { type: "url_citation", url_citation: { start_index: start, end_index: end, url, title: typeof title === "string" ? title : "" } };
}
