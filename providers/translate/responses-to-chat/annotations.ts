// Chat's url_citation annotations (web search sources: an OpenAI search model's, or a Claude or Gemini answer's as
// their translators make them) as the Responses client's: output_text annotations with the citation's fields flat,
// and a web_search_call item saying the answer searched. Chat names no query, so the call's action is a bare search
// (queries and sources are optional in the API's shape).
/**
 * One chat annotation in Responses form, or undefined for one that is not a url_citation. `from`: where the
 * output_text part starts in the chat content (a stream may split the content over several messages), so indexes
 * count in the part, as OpenAI's do.
 */
export function responsesAnnotation(a: any, from = 0): Record<string, unknown> | undefined {
  const c = a?.type === "url_citation" ? a.url_citation : undefined;
  if (!c || typeof c.url !== "string") return undefined;
  const at = (n: unknown) => Math.max(0, (typeof n === "number" ? n : 0) - from);
  return { type: "url_citation", start_index: at(c.start_index), end_index: at(c.end_index), url: c.url, title: typeof c.title === "string" ? c.title : "" };
}

/** A chat message's annotations in Responses form (url_citation only). */
export function responsesAnnotations(annotations: unknown): Record<string, unknown>[] {
  if (!Array.isArray(annotations) || !annotations.length) return [];
  const out: Record<string, unknown>[] = [];
  for (const a of annotations) {
    const r = responsesAnnotation(a);
    if (r) out.push(r);
  }
  return out;
}

/** The web_search_call item for an answer that cited web sources. */
export function webSearchCall(id: string, status: "in_progress" | "completed"): Record<string, unknown> {
  return { type: "web_search_call", id, status, action: { type: "search" } };
}
