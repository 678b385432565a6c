// `server.cors.allow_origins`: the web pages (by origin) that may call the API from a browser. An entry is compared
// with the Origin header as browsers send it (lower case, no path, no default port), so one written any other way
// would never match: it is refused at load with the spelling that would.

export interface CorsOrigins {
  /** Every origin is allowed ("*"). */
  any: boolean;
  /** Whether a request's Origin header is allowed. */
  allows(origin: string): boolean;
}

/** `https://*.example.com`: any origin of that scheme (and port) whose host ends in `.example.com`. */
interface SubdomainRule { prefix: string; suffix: string }

const WILDCARD_HOST = "wildcard-label.invalid";
/** What may stand for the `*` of a subdomain rule: host labels, at any depth. */
const LABELS = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;
const EXAMPLES = "scheme://host[:port], such as https://app.example.com or http://localhost:5173";

/** One entry's problem, or how it matches. */
function parse(entry: string): { exact: string } | { rule: SubdomainRule } | { problem: string } {
  if (entry === "null") return { problem: `"null" is the origin of sandboxed frames and file:// pages, which any site can make: list the page's real origin (${EXAMPLES})` };
  const sub = /^([a-z][a-z0-9+.-]*:\/\/)\*\./i.exec(entry);
  const text = sub ? `${sub[1]}${WILDCARD_HOST}.${entry.slice(sub[0].length)}` : entry;
  if (text.includes("*")) return { problem: `"${entry}": a wildcard may only be the whole first label of the host (https://*.example.com) or the whole entry ("*")` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `"${entry}" is not an origin: ${EXAMPLES}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { problem: `"${entry}": only http and https pages have an origin a browser sends (${EXAMPLES})` };
  const origin = url.origin;
  if (origin !== text) {
    const meant = sub ? origin.replace(WILDCARD_HOST, "*") : origin;
    return { problem: `"${entry}" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "${meant}"` };
  }
  if (!sub) return { exact: origin };
  const at = origin.indexOf(WILDCARD_HOST);
  return { rule: { prefix: origin.slice(0, at), suffix: origin.slice(at + WILDCARD_HOST.length) } };
}

/** The entries as one matcher, and a problem per entry that is not an origin. */
export function corsOrigins(entries: readonly string[]): { origins: CorsOrigins; problems: { index: number; message: string }[] } {
  const exact = new Set<string>();
  const rules: SubdomainRule[] = [];
  const problems: { index: number; message: string }[] = [];
  let any = false;
  entries.forEach((entry, index) => {
    if (entry === "*") return void (any = true);
    const p = parse(entry);
    if ("problem" in p) problems.push({ index, message: p.problem });
    else if ("exact" in p) exact.add(p.exact);
    else rules.push(p.rule);
  });
  const bySubdomain = (origin: string) => rules.some((r) => origin.length > r.prefix.length + r.suffix.length
    && origin.startsWith(r.prefix) && origin.endsWith(r.suffix)
    && LABELS.test(origin.slice(r.prefix.length, origin.length - r.suffix.length)));
  return {
    origins: { any, allows: (origin) => any || exact.has(origin) || (rules.length > 0 && bySubdomain(origin)) },
    problems,
  };
}
