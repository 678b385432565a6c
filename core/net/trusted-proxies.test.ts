import { describe, expect, it } from "vitest";
import { isTrustedPeer, trustedProxies } from "./trusted-proxies.ts";

describe("trusted proxies", () => {
  const { list, problems } = trustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"]);

  it("trusts peers in the listed addresses and ranges, IPv4 peers of a dual-stack socket included", () => {
    expect(problems).toEqual([]);
    for (const peer of ["10.1.2.3", "::ffff:10.200.0.1", "192.168.1.7", "fd12::1", "::1"]) expect(isTrustedPeer(list, peer), peer).toBe(true);
  });

  it("trusts nobody else, and nobody at all by default", () => {
    for (const peer of ["11.0.0.1", "192.168.1.8", "::ffff:192.168.1.8", "fe80::1", "127.0.0.1", "", undefined, "not-an-ip"]) {
      expect(isTrustedPeer(list, peer), String(peer)).toBe(false);
    }
    expect(isTrustedPeer(trustedProxies([]).list, "127.0.0.1")).toBe(false);
  });

  it("names every entry that is not an address or a range", () => {
    expect(trustedProxies(["10.0.0.0/33", "proxy.internal", "10.0.0.1/8/1", "::1/129", "1.2.3.4"]).problems.map((p) => p.index)).toEqual([0, 1, 2, 3]);
  });
});
