// allow_hosts entries written as URLs, with ports, or with a stray `*` passed check and never matched: a client's
// http://localhost:8080/cat.png stayed a 400 though the operator had "allowed" localhost:8080. check, start and a
// reload now refuse them at the entry, saying what to write; what they suggest does match.
import { describe, expect, it } from "vitest";
import { allowHostProblem } from "./allow-hosts.ts";
import { bare, hostAllowed } from "./url-fetch.ts";
import { problems } from "../config/config.testkit.ts";

const urlHost = (url: string) => bare(new URL(url).hostname);

describe("server.url_fetch.allow_hosts at load", () => {
  it("refuses a host with a port, a URL and a misplaced *, naming the entry and what to write", async () => {
    expect(await problems(`server:\n  url_fetch: { allow_hosts: ["localhost:8080", "http://localhost:8080", "https://*.corp", "*example.com", "exa mple"] }\n`)).toEqual([
      `F:2:30: server.url_fetch.allow_hosts[0]: "localhost:8080" holds a port, which host names are compared without, so it never matches: write "localhost" (an allowed host may be fetched on any port)`,
      `F:2:48: server.url_fetch.allow_hosts[1]: "http://localhost:8080" is a URL, not a host name, so it never matches: write "localhost" (an allowed host may be fetched on any port, over http or https)`,
      `F:2:73: server.url_fetch.allow_hosts[2]: "https://*.corp" is a URL, not a host name, so it never matches: write "*.corp" (an allowed host may be fetched on any port, over http or https)`,
      `F:2:91: server.url_fetch.allow_hosts[3]: "*example.com": a * is allowed only as a whole first label ("*.example.com" allows every name below example.com), so it never matches as written`,
      `F:2:107: server.url_fetch.allow_hosts[4]: "exa mple" holds a space, which no host name has, so it never matches: write the host name alone`,
    ]);
  });

  it("takes an entry a ${VAR:-} left empty as allowing nothing, as before, and still refuses one of spaces", async () => {
    const text = `server:\n  url_fetch: { allow_hosts: ["\${MEDIA_HOST:-}", "  "] }\n`;
    expect(await problems(text)).toEqual([
      `F:2:49: server.url_fetch.allow_hosts[1]: "  " is only spaces, which no host name is, so it never matches: write a host name (such as "media.internal") or "*.suffix", or remove it`,
    ]);
    expect(await problems(text.replace(`, "  "`, ""))).toEqual([]);
    expect(hostAllowed("media.internal", [""])).toBe(false);
  });

  it("accepts names, *.suffix globs and IP addresses, IPv6 with or without brackets", async () => {
    expect(await problems(`server:\n  url_fetch: { allow_hosts: [localhost, Media.Internal., "*.corp.example", 10.0.0.7, "::1", "[fd00::1]"] }\n`)).toEqual([]);
  });
});

describe("allowHostProblem", () => {
  it("suggests the form a URL carries the host in, which then matches", () => {
    const cases: [entry: string, url: string, write: string][] = [
      ["[::1]:8080", "http://[::1]:8080/a.png", "::1"],
      ["bücher.example", "http://bücher.example/a.png", "xn--bcher-kva.example"],
      ["::ffff:127.0.0.1", "http://[::ffff:127.0.0.1]/a.png", "::ffff:7f00:1"],
      ["*.corp:8443", "https://media.corp:8443/a.png", "*.corp"],
      ["media.internal/images", "http://media.internal/images/a.png", "media.internal"],
      ["fd00::1/images", "http://[fd00::1]/images/a.png", "fd00::1"],
    ];
    for (const [entry, url, write] of cases) {
      expect(hostAllowed(urlHost(url), [entry])).toBe(false);
      expect(allowHostProblem(entry)).toContain(`write ${JSON.stringify(write)}`);
      expect(allowHostProblem(write)).toBeUndefined();
      expect(hostAllowed(urlHost(url), [write])).toBe(true);
    }
  });

  it("calls a CIDR range a range allow_hosts does not take, suggesting no single address that would narrow it", () => {
    for (const [entry, family] of [["10.0.0.0/8", "IPv4"], ["fd00::/8", "IPv6"], ["::1/128", "IPv6"], ["[fd00::]/8", "IPv6"]]) {
      const problem = allowHostProblem(entry!);
      expect(problem).toBe(`${JSON.stringify(entry)} is an address range (${family} CIDR), which allow_hosts does not take: it compares a URL's host with exact host names, single IP addresses and "*.suffix" names, so it never matches (list each address you mean to allow)`);
      expect(problem).not.toMatch(/write|port|path/);
    }
    expect(hostAllowed("10.1.2.3", ["10.0.0.0/8"])).toBe(false);
  });

  it("refuses entries that match nothing at all", () => {
    expect(allowHostProblem(" ")).toMatch(/is only spaces/);
    expect(allowHostProblem("*")).toMatch(/a \* is allowed only as a whole first label/);
    expect(allowHostProblem("a.*.corp")).toMatch(/"\*\.example\.com" allows every name below example\.com/);
    expect(allowHostProblem("host:abc")).toMatch(/is not a host name or IP address/);
  });
});
