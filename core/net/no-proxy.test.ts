import { describe, expect, it } from "vitest";
import { bypassesProxy, parseNoProxy } from "./no-proxy.ts";

const bypass = (list: string | string[], host: string, port = 443) => bypassesProxy(parseNoProxy(list), host, port);

describe("no_proxy entries", () => {
  it("a name covers itself and every name below it, in any case, with or without a leading dot or *.", () => {
    for (const entry of ["example.com", ".example.com", "*.example.com", "EXAMPLE.com"]) {
      expect(bypass(entry, "example.com"), entry).toBe(true);
      expect(bypass(entry, "api.Example.com"), entry).toBe(true);
      expect(bypass(entry, "a.b.example.com"), entry).toBe(true);
      expect(bypass(entry, "notexample.com"), entry).toBe(false);
      expect(bypass(entry, "example.com.evil.net"), entry).toBe(false);
    }
  });

  it("* alone means no host is proxied; an empty list proxies every host", () => {
    expect(bypass("*", "api.openai.com")).toBe(true);
    expect(bypass(["*"], "10.0.0.1")).toBe(true);
    expect(bypass("", "api.openai.com")).toBe(false);
    expect(bypass([], "localhost")).toBe(false);
  });

  it("loopback is proxied unless listed (undici and curl do not exempt it)", () => {
    expect(bypass("example.com", "localhost")).toBe(false);
    expect(bypass("example.com", "127.0.0.1")).toBe(false);
    expect(bypass("localhost,127.0.0.1,::1", "localhost")).toBe(true);
    expect(bypass("localhost,127.0.0.1,::1", "127.0.0.1")).toBe(true);
    expect(bypass("localhost,127.0.0.1,::1", "[::1]")).toBe(true);
  });

  it("commas and spaces both separate entries", () => {
    const list = " internal.corp,  .svc.cluster.local   10.0.0.5 ";
    expect(bypass(list, "vault.internal.corp")).toBe(true);
    expect(bypass(list, "api.svc.cluster.local")).toBe(true);
    expect(bypass(list, "10.0.0.5")).toBe(true);
    expect(bypass(list, "api.openai.com")).toBe(false);
  });

  it("a port limits the entry to URLs on that port (the scheme's default port when the URL has none)", () => {
    expect(bypass("example.com:8443", "example.com", 8443)).toBe(true);
    expect(bypass("example.com:8443", "example.com", 443)).toBe(false);
    expect(bypass("example.com:443", "api.example.com", 443)).toBe(true);
    expect(bypass("10.1.2.3:80", "10.1.2.3", 80)).toBe(true);
    expect(bypass("10.1.2.3:80", "10.1.2.3", 443)).toBe(false);
    expect(bypass("[::1]:8080", "[::1]", 8080)).toBe(true);
    expect(bypass("[::1]:8080", "[::1]", 443)).toBe(false);
  });

  it("an IP address matches only that address, never as a suffix of another", () => {
    expect(bypass("0.0.1", "127.0.0.1")).toBe(false);
    expect(bypass("10.0.0.5", "10.0.0.50")).toBe(false);
    expect(bypass("0:0:0:0:0:0:0:1", "[::1]")).toBe(true);
  });

  it("CIDR ranges (as curl takes them) cover IP-literal hosts inside them, not names", () => {
    expect(bypass("10.0.0.0/8", "10.20.30.40")).toBe(true);
    expect(bypass("10.0.0.0/8", "11.0.0.1")).toBe(false);
    expect(bypass("10.0.0.0/8", "ten.example")).toBe(false);
    expect(bypass("fd00::/8", "[fd12::1]")).toBe(true);
    expect(bypass("fd00::/8", "[fe80::1]")).toBe(false);
    expect(bypass("192.168.0.0/16:8080", "192.168.1.1", 8080)).toBe(true);
    expect(bypass("192.168.0.0/16:8080", "192.168.1.1", 443)).toBe(false);
  });

  it("an IPv6 range may be written with its address in brackets, as a URL writes the host", () => {
    expect(bypass("[fd00::]/8", "[fd12::1]")).toBe(true);
    expect(bypass("[fd00::]/8", "[fe80::1]")).toBe(false);
    expect(bypass("[fd00::]/8:8080", "[fd12::1]", 8080)).toBe(true);
    expect(bypass("[fd00::]/8:8080", "[fd12::1]", 443)).toBe(false);
  });

  it("a name in Unicode matches the host as URLs carry it (punycode), and the other way round", () => {
    expect(bypass("bücher.de", "xn--bcher-kva.de")).toBe(true);
    expect(bypass(".BÜCHER.de", "shop.xn--bcher-kva.de")).toBe(true);
    expect(bypass("*.bücher.de", "shop.xn--bcher-kva.de")).toBe(true);
    expect(bypass("xn--bcher-kva.de", new URL("https://bücher.de/").hostname)).toBe(true);
    expect(bypass("bücher.de", "buecher.de")).toBe(false);
  });

  it("keeps the entries as given, for the startup line", () => {
    expect(parseNoProxy("localhost, .corp ,10.0.0.0/8").text).toEqual(["localhost", ".corp", "10.0.0.0/8"]);
  });
});
