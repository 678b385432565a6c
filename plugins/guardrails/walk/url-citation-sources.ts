// A web source's title and url (a url_citation annotation, chat's or Responses') are text the upstream wrote, shown to
// the client beside the answer: a secret or an address in them would leak what the answer's text has masked. They go
// through the same output rules and placeholder restore as the answer's text (a block rule matching one refuses it).
// A url they change must still parse (masked-url.ts): one that cannot (the change is in its host) takes its
// annotation out, since the source cannot be shown without the secret.
import { maskedUrl } from "./masked-url.ts";

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/**
 * Each url_citation's title and url in `annotations` (in place), through `output`; one whose url can no longer be
 * given is removed from the array. How many were removed.
 */
export function checkUrlCitationSources(annotations: unknown, output: (text: string) => string): number {
  if (!Array.isArray(annotations)) return 0;
  let removed = 0;
  for (let i = 0; i < annotations.length; i++) {
    const a = annotations[i];
    if (!isObj(a) || a.type !== "url_citation") continue;
    // Chat nests the source ({type, url_citation: {url, title}}); Responses has it on the annotation.
    const c = isObj(a.url_citation) ? a.url_citation : a;
    if (typeof c.title === "string" && c.title) c.title = output(c.title);
    if (typeof c.url !== "string" || !c.url) continue;
    const url = maskedUrl(c.url, output(c.url));
    if (url !== undefined) {
      c.url = url;
      continue;
    }
    annotations.splice(i--, 1);
    removed++;
  }
  return removed;
}
