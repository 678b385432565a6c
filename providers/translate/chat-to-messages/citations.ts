// Claude's web search sources (a text block's citations of type web_search_result_location) as chat url_citation
// annotations. Anthropic gives the cited text, not offsets: each annotation spans the text block that carried it.
// Other citation types (a document's char or page location) point into the client's own documents, not at a URL.
import { urlCitation, type UrlCitation } from "../url-citation.ts";

/** The block's web citations spanning [start, end) of the chat content, added to `into` (one per URL per block). */
export function addWebCitations(citations: unknown, start: number, end: number, into: UrlCitation[]): void {
  if (!Array.isArray(citations)) return;
  const seen = new Set<string>();
  for (const c of citations) {
    if (c?.type !== "web_search_result_location" || typeof c.url !== "string" || seen.has(c.url)) continue;
    seen.add(c.url);
    into.push(urlCitation(c.url, c.title, start, end));
  }
}
