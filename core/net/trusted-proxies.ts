// `server.trusted_proxies`: the peers whose X-Forwarded-Host / X-Forwarded-Proto the gateway believes. Anyone else
// could name any host in them, and the gateway would sign asset URLs pointing there.
import { BlockList, isIP } from "node:net";

export type TrustedProxies = BlockList;

/** One entry: an address (`10.0.0.7`, `::1`) or a CIDR range (`10.0.0.0/8`, `fd00::/8`); a problem otherwise. */
function add(list: BlockList, entry: string): string | undefined {
  const [address, prefix, extra] = entry.trim().split("/");
  const family = isIP(address ?? "");
  if (!family || extra !== undefined) return `"${entry}" is neither an IP address nor a CIDR range (10.0.0.0/8, fd00::/8)`;
  const type = family === 4 ? "ipv4" : "ipv6";
  if (prefix === undefined) {
    list.addAddress(address!, type);
    return undefined;
  }
  const bits = Number(prefix);
  if (!/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) return `"${entry}": the prefix length must be 0–${family === 4 ? 32 : 128}`;
  list.addSubnet(address!, bits, type);
  return undefined;
}

/** The entries as one list, and a problem per entry that is not an address or range. */
export function trustedProxies(entries: readonly string[]): { list: TrustedProxies; problems: { index: number; message: string }[] } {
  const list = new BlockList();
  const problems: { index: number; message: string }[] = [];
  entries.forEach((entry, index) => {
    const problem = add(list, entry);
    if (problem) problems.push({ index, message: problem });
  });
  return { list, problems };
}

/** The connection's peer is a trusted proxy (an IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d). */
export function isTrustedPeer(list: TrustedProxies, peer: string | undefined): boolean {
  if (!peer) return false;
  const v4 = peer.startsWith("::ffff:") && isIP(peer.slice(7)) === 4 ? peer.slice(7) : undefined;
  if (v4) return list.check(v4, "ipv4");
  const family = isIP(peer);
  return family !== 0 && list.check(peer, family === 4 ? "ipv4" : "ipv6");
}
