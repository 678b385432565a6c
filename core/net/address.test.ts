import { describe, expect, it } from "vitest";
import { internalRange } from "./address.ts";

describe("internalRange", () => {
  it.each([
    ["127.0.0.1", "loopback"], ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"],
    ["169.254.169.254", "cloud metadata"], ["169.254.1.1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"], ["100.127.255.255", "carrier-grade NAT"], ["100.100.100.200", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"], ["0.1.2.3", "unspecified"],
    ["224.0.0.1", "multicast"], ["239.255.255.250", "multicast"], ["240.0.0.1", "reserved"], ["255.255.255.255", "reserved"],
    ["192.0.0.170", "reserved"], ["198.18.0.1", "reserved"],
    ["::1", "loopback"], ["::", "unspecified"], ["0:0:0:0:0:0:0:1", "loopback"],
    ["fc00::1", "unique-local"], ["fd12:3456::1", "unique-local"], ["fd00:ec2::254", "cloud metadata"],
    ["fe80::1", "link-local"], ["fe80::1%eth0", "link-local"], ["febf::1", "link-local"], ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"], ["::ffff:7f00:1", "loopback"], ["::ffff:10.1.2.3", "private"], ["::ffff:169.254.169.254", "cloud metadata"],
    ["::127.0.0.1", "loopback"], ["::a00:1", "private"],
    ["64:ff9b::10.0.0.1", "private"], ["64:ff9b::7f00:1", "loopback"], ["64:ff9b:1::1", "private"],
    ["2002:7f00:1::", "loopback"], ["2002:a9fe:a9fe::1", "cloud metadata"],
    ["2001:0:4136:e378::1", "reserved"], ["2001:db8::1", "reserved"],
  ])("%s is %s", (address, range) => {
    expect(internalRange(address)).toBe(range);
  });

  it.each([
    "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.1.1", "192.169.0.1", "11.0.0.1",
    "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
  ])("%s is public", (address) => {
    expect(internalRange(address)).toBeUndefined();
  });

  it("something that is not an IP address is refused, not waved through", () => {
    expect(internalRange("localhost")).toBe("invalid");
    expect(internalRange("1.2.3")).toBe("invalid");
  });
});
