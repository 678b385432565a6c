// Which hosts skip the egress proxy: NO_PROXY / server.egress_proxy.no_proxy, read as undici's EnvHttpProxyAgent
// and curl read it. Entries are separated by commas or spaces, compared without case:
// - `*` (alone): no host is proxied;
// - a name (`example.com`, `.example.com`, `*.example.com`, `bücher.de` as its punycode): that name and every name
//   below it;
// - an IP address (`10.1.2.3`, `::1`, `[::1]`): that address written as the URL's host, nothing else (no DNS);
// - a CIDR range (`10.0.0.0/8`, `fd00::/8` or `[fd00::]/8`, as curl takes them): IP-literal hosts inside it;
// - any of these with `:port`: only URLs on that port.
// Loopback is not special: `localhost` and `127.0.0.1` are proxied unless listed (as undici and curl do).
import { BlockList, isIP } from "node:net";
import { domainToASCII } from "node:url";

interface Entry {
  /** Lower case, no leading `.` / `*.`, no brackets. */
  host: string;
  /** 0: any port. */
  port: number;
  ranges?: BlockList;
}

export interface NoProxy {
  /** `*`: nothing is proxied. */
  all: boolean;
  entries: Entry[];
  /** The entries as given (for the startup line). */
  text: string[];
}

/** A NO_PROXY value (comma- or space-separated) or the config's list, parsed once. */
export function parseNoProxy(value: string | readonly string[] | undefined): NoProxy {
  const items = (typeof value === "string" ? [value] : value ?? []).flatMap((v) => v.split(/[,\s]+/)).map((s) => s.trim()).filter(Boolean);
  const out: NoProxy = { all: false, entries: [], text: items };
  for (const item of items) {
    if (item === "*") {
      out.all = true;
      continue;
    }
    const entry = parseEntry(item.toLowerCase());
    if (entry) out.entries.push(entry);
  }
  return out;
}

function parseEntry(item: string): Entry | undefined {
  let host = item;
  let port = 0;
  // `[::1]`, `[::1]:8080`, and a range with its address bracketed as a URL writes it (`[fd00::]/8`).
  const bracketed = /^\[([^\]]+)\](\/\d{1,3})?(?::(\d+))?$/.exec(host);
  if (bracketed) {
    host = bracketed[1]! + (bracketed[2] ?? "");
    port = Number(bracketed[3] ?? 0);
  } else {
    // `name:port` or `1.2.3.4:port`; a bare IPv6 address (several colons) has no port.
    const m = /^([^:]+):(\d+)$/.exec(host);
    if (m) {
      host = m[1]!;
      port = Number(m[2]);
    }
  }
  const cidr = /^(.+)\/(\d{1,3})$/.exec(host);
  if (cidr && isIP(cidr[1]!)) {
    const family = isIP(cidr[1]!);
    const bits = Number(cidr[2]);
    if (bits > (family === 4 ? 32 : 128)) return undefined;
    const ranges = new BlockList();
    ranges.addSubnet(cidr[1]!, bits, family === 4 ? "ipv4" : "ipv6");
    return { host, port, ranges };
  }
  // IPv6 in the form URL.hostname gives it (0:0:0:0:0:0:0:1 is ::1).
  if (isIP(host) === 6) return { host: canonicalV6(host), port };
  host = host.replace(/^\*?\./, "").replace(/\.$/, "");
  // URL.hostname carries a Unicode name as punycode (bücher.de is xn--bcher-kva.de): compare it so.
  if (!/^[\x00-\x7f]*$/.test(host)) host = domainToASCII(host) || host;
  return host ? { host, port } : undefined;
}

/** Whether a URL's host (as URL.hostname gives it: IPv6 in brackets) and port skip the proxy. */
export function bypassesProxy(noProxy: NoProxy, hostname: string, port: number): boolean {
  if (noProxy.all) return true;
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  const ip = isIP(host);
  for (const e of noProxy.entries) {
    if (e.port && e.port !== port) continue;
    if (e.ranges) {
      if (ip && e.ranges.check(host, ip === 4 ? "ipv4" : "ipv6")) return true;
      continue;
    }
    if (host === e.host) return true;
    // A name suffix; an IP address is never matched by a suffix (0.0.1 is not an entry for 127.0.0.1).
    if (!ip && !isIP(e.host) && host.endsWith(`.${e.host}`)) return true;
  }
  return false;
}

function canonicalV6(address: string): string {
  try {
    return new URL(`http://[${address}]`).hostname.slice(1, -1);
  } catch {
    return address; // a zone id (fe80::1%eth0): URLs cannot carry one, so it never matches
  }
}
