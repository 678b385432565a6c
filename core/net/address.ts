// Which IP addresses a client-supplied URL may never reach: loopback, private, link-local (cloud metadata),
// CGNAT, unique-local, multicast and reserved ranges, IPv4 and IPv6 alike. IPv6 forms that carry an IPv4
// address (mapped, compatible, NAT64, 6to4) are judged by the address they carry.
import { isIPv4, isIPv6 } from "node:net";

/** Why `address` is off limits ("loopback", "private", …), or undefined when it is a public address. */
export function internalRange(address: string): string | undefined {
  if (isIPv4(address)) return v4Range(v4Bytes(address));
  const bytes = isIPv6(address) ? v6Bytes(address) : undefined;
  if (!bytes) return "invalid";
  return v6Range(bytes);
}

function v4Bytes(a: string): number[] {
  return a.split(".").map(Number);
}

function v4Range([a, b, c, d]: number[]): string | undefined {
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 169 && b === 254) return c === 169 && d === 254 ? "cloud metadata" : "link-local";
  if (a === 100 && b! >= 64 && b! <= 127) return "carrier-grade NAT"; // also Alibaba's metadata 100.100.100.200
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "reserved"; // IETF assignments, TEST-NET-1
  if (a === 192 && b === 88 && c === 99) return "reserved"; // 6to4 relay anycast
  if (a === 198 && (b === 18 || b === 19)) return "reserved"; // benchmarking
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "reserved"; // TEST-NET-2/3
  if (a! >= 224 && a! <= 239) return "multicast";
  if (a! >= 240) return "reserved"; // includes 255.255.255.255
  return undefined;
}

/** 16 bytes of an IPv6 address (node:net has already said it is one); zone ids are dropped. */
function v6Bytes(text: string): number[] | undefined {
  let s = text.split("%")[0]!.toLowerCase();
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    tail.push(...v4Bytes(dotted[1]!));
    s = s.slice(0, -dotted[1]!.length) + "0:0"; // two placeholder groups, replaced below
  }
  const [head, rest] = s.split("::") as [string, string | undefined];
  const groups = (p: string) => (p ? p.split(":").filter((g) => g !== "") : []);
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const fill = rest === undefined ? 0 : 8 - h.length - r.length;
  const all = [...h, ...Array(fill).fill("0"), ...r];
  if (all.length !== 8) return undefined;
  const out = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length) out.splice(12, 4, ...tail);
  return out;
}

function v6Range(b: number[]): string | undefined {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4);
  if (zero(0, 15) && b[15] === 0) return "unspecified";
  if (zero(0, 15) && b[15] === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (the deprecated compatible form): the IPv4 address decides.
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Range(v4(12));
  if (zero(0, 12)) return v4Range(v4(12));
  // 64:ff9b::/96, NAT64 well-known prefix; 64:ff9b:1::/48 is the local-use NAT64 prefix.
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zero(4, 12)) return v4Range(v4(12));
    if (b[4] === 0 && b[5] === 1) return "private";
  }
  if (b[0] === 0x20 && b[1] === 0x02) return v4Range(v4(2)); // 6to4 carries its IPv4 address in bits 16-47
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return "reserved"; // Teredo tunnels
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return "reserved"; // documentation
  if (b[0] === 0x01 && zero(1, 8)) return "reserved"; // 100::/64 discard-only
  if ((b[0]! & 0xfe) === 0xfc) {
    // fc00::/7 unique-local; fd00:ec2::254 is AWS's IPv6 instance metadata service.
    return b[0] === 0xfd && b[1] === 0 && b[2] === 0x0e && b[3] === 0xc2 && zero(4, 14) && b[14] === 0x02 && b[15] === 0x54 ? "cloud metadata" : "unique-local";
  }
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return "link-local";
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return "site-local";
  if (b[0] === 0xff) return "multicast";
  return undefined;
}
