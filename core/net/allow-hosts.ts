// `server.url_fetch.allow_hosts` entries are compared with a URL's bare host name (url-fetch.ts hostAllowed), so an
// entry written as a URL, with a port or a path, with a `*` anywhere but a whole first label, or in a form no URL
// carries its host in (Unicode, where URLs carry punycode) never matched: the operator believed the host allowed while
// its downloads stayed refused. Such entries are refused at load, saying what to write instead.
import { isIP } from "node:net";
import { bare } from "./url-fetch.ts";

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The host as a URL carries it (lower case, punycode, IPv6 without brackets), or undefined when it is none. */
function asUrlHost(host: string): string | undefined {
  try {
    const u = new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}/`);
    return u.port === "" && u.pathname === "/" ? bare(u.hostname) : undefined;
  } catch {
    return undefined;
  }
}

/** "IPv4 CIDR" or "IPv6 CIDR" for an `address/prefix` entry (as trusted_proxies and no_proxy take), else undefined. */
function cidrRange(entry: string): string | undefined {
  const m = /^(.+)\/(\d{1,3})$/.exec(entry);
  const family = m ? isIP(bare(m[1]!)) : 0;
  return family ? `IPv${family} CIDR` : undefined;
}

/** Why one entry can never match a host, with what to write instead; undefined when it can match. */
export function allowHostProblem(entry: string): string | undefined {
  const e = bare(entry);
  const quoted = JSON.stringify(entry);
  // "" is what an unset `${MEDIA_HOST:-}` leaves: it allows nothing (no URL's host is empty) and ran before, so it is
  // no problem. Spaces alone are something written by hand, so they are.
  if (entry === "") return undefined;
  if (e === "") return `${quoted} is only spaces, which no host name is, so it never matches: write a host name (such as "media.internal") or "*.suffix", or remove it`;
  if (SCHEME.test(e)) {
    let host: string | undefined;
    try {
      host = bare(new URL(e).hostname);
    } catch { /* named below without a suggestion */ }
    return `${quoted} is a URL, not a host name, so it never matches: ${host ? `write ${JSON.stringify(host)}` : "write its host name alone"} (an allowed host may be fetched on any port, over http or https)`;
  }
  if (/\s/.test(e)) return `${quoted} holds a space, which no host name has, so it never matches: write the host name alone`;
  const wildcard = e.startsWith("*.");
  const name = wildcard ? e.slice(2) : e;
  if (name.includes("*")) {
    const rest = e.replace(/^[*.]+/, "");
    const suffix = rest && !rest.includes("*") ? rest : "example.com";
    return `${quoted}: a * is allowed only as a whole first label ("*.${suffix}" allows every name below ${suffix}), so it never matches as written`;
  }
  const range = cidrRange(e);
  if (range) return `${quoted} is an address range (${range}), which allow_hosts does not take: it compares a URL's host with exact host names, single IP addresses and "*.suffix" names, so it never matches (list each address you mean to allow)`;
  if (isIP(name) !== 6) {
    const slash = name.indexOf("/");
    const hostPart = slash >= 0 ? name.slice(0, slash) : name;
    // An IPv6 address before a path has colons of its own, not a port.
    const port = isIP(bare(hostPart)) === 6 ? null : /^(.*):(\d*)$/.exec(hostPart);
    const host = asUrlHost(port ? port[1]! : hostPart);
    const write = host ? `: write ${JSON.stringify(wildcard ? `*.${host}` : host)}` : "";
    if (port) return `${quoted} holds a port, which host names are compared without, so it never matches${write} (an allowed host may be fetched on any port)`;
    if (slash >= 0) return `${quoted} holds a path, which host names are compared without, so it never matches${write}`;
  }
  const host = asUrlHost(name);
  if (host === undefined) return `${quoted} is not a host name or IP address, so it never matches`;
  if (host !== name) return `${quoted} is never a URL's host as written (URLs carry ${JSON.stringify(host)}), so it never matches: write ${JSON.stringify(wildcard ? `*.${host}` : host)}`;
  return undefined;
}

/** A problem per allow_hosts entry that can never match. */
export function allowHostsProblems(entries: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  entries.forEach((entry, index) => {
    const message = allowHostProblem(entry);
    if (message) problems.push({ index, message });
  });
  return problems;
}
