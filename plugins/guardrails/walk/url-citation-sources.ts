// A web source's title and url (a url_citation annotation, chat's or Responses') are text the upstream wrote, shown to
// the client beside the answer: a secret or an address in them would leak what the answer's text has masked. They go
// through the same output rules and placeholder restore as the answer's text (a block rule matching one refuses it).

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/** Each url_citation's title and url in `annotations` (in place), through `output`. */
export function checkUrlCitationSources(annotations: unknown, output: (text: string) => string): void {
  if (!Array.isArray(annotations)) return;
  for (const a of annotations) {
    if (!isObj(a) || a.type !== "url_citation") continue;
    // Chat nests the source ({type, url_citation: {url, title}}); Responses has it on the annotation.
    const c = isObj(a.url_citation) ? a.url_citation : a;
    for (const k of ["title", "url"]) if (typeof c[k] === "string" && c[k]) c[k] = output(c[k]);
  }
}
