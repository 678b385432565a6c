import { describe, expect, it } from "vitest";
import { corsOrigins } from "./cors-origins.ts";

const allows = (entries: string[], origin: string) => corsOrigins(entries).origins.allows(origin);
const problems = (entries: string[]) => corsOrigins(entries).problems;

describe("server.cors.allow_origins", () => {
  it("an exact origin allows that origin only: not another scheme, port or host", () => {
    const list = ["https://app.example.com", "http://localhost:5173"];
    expect(allows(list, "https://app.example.com")).toBe(true);
    expect(allows(list, "http://localhost:5173")).toBe(true);
    expect(allows(list, "http://app.example.com")).toBe(false);
    expect(allows(list, "https://app.example.com:8443")).toBe(false);
    expect(allows(list, "https://evil.example.com")).toBe(false);
    expect(allows(list, "https://app.example.com.evil.net")).toBe(false);
    expect(allows(list, "http://localhost:5174")).toBe(false);
    expect(allows(list, "null")).toBe(false);
  });

  it('"*" allows every origin', () => {
    expect(corsOrigins(["*"]).origins.any).toBe(true);
    expect(allows(["*"], "https://anything.test")).toBe(true);
    expect(allows(["*"], "null")).toBe(true);
  });

  it("https://*.example.com allows its subdomains at any depth, with that scheme and port, not the domain itself", () => {
    const list = ["https://*.example.com", "http://*.dev.test:3000"];
    expect(allows(list, "https://a.example.com")).toBe(true);
    expect(allows(list, "https://pr-12.preview.example.com")).toBe(true);
    expect(allows(list, "https://example.com")).toBe(false);
    expect(allows(list, "https://.example.com")).toBe(false);
    expect(allows(list, "http://a.example.com")).toBe(false);
    expect(allows(list, "https://a.example.com:444")).toBe(false);
    expect(allows(list, "https://aexample.com")).toBe(false);
    expect(allows(list, "https://a.example.com.evil.net")).toBe(false);
    expect(allows(list, "http://x.dev.test:3000")).toBe(true);
    expect(allows(list, "http://x.dev.test")).toBe(false);
  });

  it("refuses entries a browser would never send, naming the spelling that would match", () => {
    expect(problems(["https://app.example.com/", "https://App.Example.com", "https://app.example.com:443", "https://app.example.com/chat", "https://*.Example.com/"])).toEqual([
      { index: 0, message: '"https://app.example.com/" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://app.example.com"' },
      { index: 1, message: '"https://App.Example.com" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://app.example.com"' },
      { index: 2, message: '"https://app.example.com:443" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://app.example.com"' },
      { index: 3, message: '"https://app.example.com/chat" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://app.example.com"' },
      { index: 4, message: '"https://*.Example.com/" is not an origin as browsers send it (scheme://host[:port]: lower case, no path or trailing slash, no default port): write "https://*.example.com"' },
    ]);
  });

  it("refuses what is no origin at all, null, other schemes and wildcards elsewhere", () => {
    expect(problems(["app.example.com", "null", "file:///tmp/page.html", "chrome-extension://abc", "https://app-*.example.com", "*.example.com", "https://*"]).map((p) => [p.index, p.message])).toEqual([
      [0, '"app.example.com" is not an origin: scheme://host[:port], such as https://app.example.com or http://localhost:5173'],
      [1, '"null" is the origin of sandboxed frames and file:// pages, which any site can make: list the page\'s real origin (scheme://host[:port], such as https://app.example.com or http://localhost:5173)'],
      [2, '"file:///tmp/page.html": only http and https pages have an origin a browser sends (scheme://host[:port], such as https://app.example.com or http://localhost:5173)'],
      [3, '"chrome-extension://abc": only http and https pages have an origin a browser sends (scheme://host[:port], such as https://app.example.com or http://localhost:5173)'],
      [4, '"https://app-*.example.com": a wildcard may only be the whole first label of the host (https://*.example.com) or the whole entry ("*")'],
      [5, '"*.example.com": a wildcard may only be the whole first label of the host (https://*.example.com) or the whole entry ("*")'],
      [6, '"https://*": a wildcard may only be the whole first label of the host (https://*.example.com) or the whole entry ("*")'],
    ]);
    // A refused entry allows nothing; the others still work.
    expect(allows(["https://app.example.com/", "http://localhost:5173"], "https://app.example.com")).toBe(false);
    expect(allows(["https://app.example.com/", "http://localhost:5173"], "http://localhost:5173")).toBe(true);
  });

  it("IPv6 and IP origins are origins too", () => {
    expect(problems(["http://[::1]:5173", "http://127.0.0.1:8080"])).toEqual([]);
    expect(allows(["http://[::1]:5173"], "http://[::1]:5173")).toBe(true);
  });
});
