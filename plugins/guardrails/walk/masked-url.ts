// A url the output rules changed (a mask, a placeholder restored) must still be a url a client can open: brackets in
// a host are an IPv6 literal, so `https://[REDACTED:SECRET].example/x` does not parse, and a client's `new URL()`
// throws. A change after the host (path, query, fragment) keeps the url, the characters a url may not hold there
// percent-encoded (`%5BREDACTED:SECRET%5D`); a change in the scheme, userinfo, host or port leaves no url that
// points at the source without the secret: undefined, and the source is not shown.

/** The scheme and authority (`https://user@host:port`) of a hierarchical url. */
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** Characters a url's path, query and fragment may hold as they are (RFC 3986 pchar, "/", "?", "#"), or a %XX. */
const NOT_ALLOWED = /%(?![0-9a-f]{2})|[^a-z0-9\-._~!$&'()*+,;=:@/?#%]/giu;

/** `masked`, what the output rules made of `url`, as a url that parses; undefined when none can be given. */
export function maskedUrl(url: string, masked: string): string | undefined {
  if (masked === url) return url;
  const authority = url.match(AUTHORITY)?.[0];
  if (authority === undefined || !masked.startsWith(authority)) return undefined;
  let out: string;
  try {
    out = authority + masked.slice(authority.length).replace(NOT_ALLOWED, (c) => encodeURIComponent(c));
  } catch {
    return undefined; // a lone surrogate has no encoding
  }
  if (!URL.canParse(out) || !URL.canParse(url) || new URL(out).host !== new URL(url).host) return undefined;
  return out;
}
