// Client-URL downloads against loopback servers only: "public-looking" names reach a server solely through the
// injected resolver, and every refusal is asserted to happen before any connection.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { fetchClientUrl, hostAllowed, type Resolver, type UrlFetchOptions } from "./url-fetch.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../test/helpers/https-loopback.ts";
import { listenLoopback } from "../../test/upstreams/http-fake.ts";
import { startConnectProxy } from "../../test/helpers/connect-proxy.ts";
import { freePort } from "../../test/helpers/ports.ts";
import { resolveEgressProxy } from "./egress-proxy.ts";

/** A resolver that answers from a table and counts its calls; names not in it do not resolve. */
function table(answers: Record<string, string[] | string[][]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = (async (host: string) => {
    calls.push(host);
    const a = answers[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    // A list of lists: one answer per call, the last one repeating (a rebinding DNS server).
    const n = calls.filter((c) => c === host).length - 1;
    const list = (Array.isArray(a[0]) ? (a as string[][])[Math.min(n, a.length - 1)] : a) as string[];
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  }) as Resolver & { calls: string[] };
  fn.calls = calls;
  return fn;
}

const policy = (o: Partial<UrlFetchOptions> = {}): UrlFetchOptions => ({ allowHosts: [], maxBytes: 1024 * 1024, timeoutMs: 5000, ca: TEST_CERT, ...o });

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

let img: HttpsLoopback;
let internal: HttpsLoopback;
beforeAll(async () => {
  img = await startHttpsLoopback((req, res) => {
    const u = new URL(req.url!, "https://x");
    if (u.pathname === "/seed.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
    if (u.pathname === "/upper.png") return void res.writeHead(200, { "content-type": "Image/PNG; charset=binary" }).end(PNG_1x1);
    if (u.pathname === "/redirect") return void res.writeHead(302, { location: u.searchParams.get("to")! }).end();
    if (u.pathname === "/loop") return void res.writeHead(301, { location: "/loop" }).end();
    if (u.pathname === "/big") return void res.writeHead(200, { "content-type": "image/png", "content-length": "4096" }).end(Buffer.alloc(4096, 1));
    if (u.pathname === "/huge-length") {
      res.writeHead(200, { "content-type": "image/png", "content-length": String(1 << 30) });
      return void res.write(Buffer.alloc(10));
    }
    if (u.pathname === "/endless") {
      res.writeHead(200, { "content-type": "image/png" });
      const pump = () => { while (res.write(Buffer.alloc(16 * 1024, 7))); };
      res.on("drain", pump);
      return pump();
    }
    if (u.pathname === "/hang") return; // never answers
    res.writeHead(404, { "content-type": "text/plain" }).end("not here");
  });
  internal = await startHttpsLoopback((_req, res) => void res.writeHead(200).end("secret"));
});
afterAll(async () => {
  await img.close();
  await internal.close();
});
afterEach(() => {
  // No test may have reached the "internal" service.
  expect(internal.connections).toBe(0);
});

describe("refused before any connection", () => {
  it("localhost, through the system resolver, resolves to loopback", async () => {
    const before = img.connections;
    const err = await refusal(fetchClientUrl(`https://localhost:${img.port}/seed.png`, policy(), { field: "image_url" }));
    expect(err.status).toBe(400);
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toMatch(/^image_url resolves to a loopback address (127\.0\.0\.1|::1)/);
    expect(err.details).toMatchObject({ field: "image_url", reason: "internal_address" });
    expect(img.connections).toBe(before);
  });

  it.each([
    ["127.0.0.1", "loopback"], ["10.0.0.1", "private"], ["::1", "loopback"], ["::ffff:127.0.0.1", "loopback"],
    ["169.254.169.254", "cloud metadata"], ["fd00:ec2::254", "cloud metadata"], ["100.64.1.1", "carrier-grade NAT"],
    ["fe80::1", "link-local"], ["64:ff9b::a00:1", "private"],
  ])("a public-looking name resolving to %s (%s)", async (address, range) => {
    const resolver = table({ "cdn.example.com": [address] });
    const err = await refusal(fetchClientUrl("https://cdn.example.com/a.png", policy({ resolver }), { field: "messages[0].content[1].image_url.url" }));
    expect(err.message).toBe(`messages[0].content[1].image_url.url resolves to a ${range} address ${address}; the gateway only downloads from public addresses`);
    expect(err.details).toMatchObject({ field: "messages[0].content[1].image_url.url", address });
  });

  it("every resolved address is checked, not only the first", async () => {
    // The first answer is public and never connected to: the private second answer refuses the URL.
    const resolver = table({ "cdn.example.com": ["93.184.216.34", "10.1.2.3"] });
    const err = await refusal(fetchClientUrl("https://cdn.example.com/a.png", policy({ resolver }), { field: "image_url" }));
    expect(err.details).toMatchObject({ address: "10.1.2.3" });
  });

  it.each([
    ["https://127.0.0.1/x", "127.0.0.1"], ["https://2130706433/x", "127.0.0.1"], ["https://0x7f.1/x", "127.0.0.1"],
    ["https://017700000001/x", "127.0.0.1"], ["https://[::1]/x", "::1"], ["https://[::ffff:7f00:1]/x", "::ffff:7f00:1"],
    ["https://169.254.169.254/latest/meta-data/", "169.254.169.254"], ["https://[fd00:ec2::254]/", "fd00:ec2::254"],
  ])("the IP literal in %s", async (url, address) => {
    const resolver = table({});
    const err = await refusal(fetchClientUrl(url, policy({ resolver }), { field: "image_url" }));
    expect(err.message).toContain(`image_url points at a`);
    expect(err.details).toMatchObject({ reason: "internal_address", address });
    expect(resolver.calls).toEqual([]);
  });

  it.each(["ftp://cdn.example.com/a.png", "file:///etc/passwd", "data:image/png;base64,AAAA", "gopher://cdn.example.com/"])("not https: %s", async (url) => {
    const resolver = table({ "cdn.example.com": ["127.0.0.1"] });
    const err = await refusal(fetchClientUrl(url, policy({ resolver }), { field: "image_url", code: "BAD_REQUEST" }));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toBe("image_url must be an https URL");
    expect(resolver.calls).toEqual([]);
  });

  it.each(["http://cdn.example.com/a.png", "HTTP://localhost:24444/img.png", "http://[::1]:24444/img.png"])("plain http from a host not in allow_hosts: the refusal names the setting that would allow it (%s)", async (url) => {
    const resolver = table({ "cdn.example.com": ["127.0.0.1"], localhost: ["127.0.0.1"] });
    const field = "messages[0].content[1].image_url.url";
    const err = await refusal(fetchClientUrl(url, policy({ resolver, allowHosts: ["img.test"] }), { field }));
    expect(err.status).toBe(400);
    expect(err.message).toBe(`${field} must be an https URL: plain http is downloaded only from hosts in server.url_fetch.allow_hosts`);
    expect(err.details).toMatchObject({ field, reason: "not_https", setting: "server.url_fetch.allow_hosts" });
    expect(resolver.calls).toEqual([]);
  });

  it("not a URL, credentials in it, a host that does not resolve", async () => {
    const resolver = table({});
    expect((await refusal(fetchClientUrl("https://", policy({ resolver }), { field: "image_url" }))).details?.reason).toBe("invalid_url");
    expect((await refusal(fetchClientUrl("seed.png", policy({ resolver }), { field: "image_url" }))).details?.reason).toBe("invalid_url");
    expect((await refusal(fetchClientUrl("https://u:p@cdn.example.com/", policy({ resolver }), { field: "image_url" }))).details?.reason).toBe("credentials");
    const nx = await refusal(fetchClientUrl("https://nowhere.example.com/", policy({ resolver }), { field: "image_url" }));
    expect(nx.message).toBe("image_url host nowhere.example.com does not resolve");
  });
});

describe("allowlisted hosts", () => {
  it("an allowlisted name may resolve to an internal address; TLS and Host use the name", async () => {
    const resolver = table({ "img.test": ["127.0.0.1"] });
    const got = await fetchClientUrl(`https://img.test:${img.port}/seed.png`, policy({ resolver, allowHosts: ["img.test"] }), { field: "image_url" });
    expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
    expect(got.contentType).toBe("image/png");
    expect(img.requests.at(-1)).toMatchObject({ method: "GET", path: "/seed.png", host: `img.test:${img.port}` });
  });

  it("the content type comes back as a bare lower-case media type (media types are case-insensitive, RFC 9110 §8.3.1)", async () => {
    const resolver = table({ "img.test": ["127.0.0.1"] });
    const got = await fetchClientUrl(`https://img.test:${img.port}/upper.png`, policy({ resolver, allowHosts: ["img.test"] }), { field: "image_url" });
    expect(got.contentType).toBe("image/png");
  });

  it("*.suffix globs match names below the suffix only", async () => {
    expect(hostAllowed("a.img.test", ["*.img.test"])).toBe(true);
    expect(hostAllowed("A.B.IMG.TEST.", ["*.img.test"])).toBe(true);
    expect(hostAllowed("img.test", ["*.img.test"])).toBe(false);
    expect(hostAllowed("evilimg.test", ["*.img.test"])).toBe(false);
    expect(hostAllowed("img.test.evil.com", ["img.test"])).toBe(false);
    expect(hostAllowed("[::1]", ["::1"])).toBe(true);
    const resolver = table({ "a.img.test": ["127.0.0.1"] });
    const got = await fetchClientUrl(`https://a.img.test:${img.port}/seed.png`, policy({ resolver, allowHosts: ["*.img.test"] }), { field: "image_url" });
    expect(got.bytes.length).toBe(PNG_1x1.length);
  });

  it("plain http only for allowlisted hosts", async () => {
    const plain = await listenLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1));
    try {
      const resolver = table({ "img.test": ["127.0.0.1"] });
      const url = `http://img.test:${plain.port}/seed.png`;
      expect((await refusal(fetchClientUrl(url, policy({ resolver }), { field: "image_url" }))).details?.reason).toBe("not_https");
      const got = await fetchClientUrl(url, policy({ resolver, allowHosts: ["img.test"] }), { field: "image_url" });
      expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
    } finally {
      await plain.close();
    }
  });

  it("plain http to an allowlisted IPv6 literal ([::1] as ::1 or [::1] in allow_hosts)", async () => {
    const plain = createServer((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1));
    await new Promise<void>((r) => plain.listen(0, "::1", () => r()));
    try {
      const url = `http://[::1]:${(plain.address() as AddressInfo).port}/img.png`;
      expect((await refusal(fetchClientUrl(url, policy(), { field: "image_url" }))).details?.reason).toBe("not_https");
      for (const entry of ["::1", "[::1]"]) {
        const got = await fetchClientUrl(url, policy({ allowHosts: [entry] }), { field: "image_url" });
        expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
      }
    } finally {
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
    }
  });

  it("the system trust store is used unless told otherwise: the test certificate is not trusted", async () => {
    const resolver = table({ "img.test": ["127.0.0.1"] });
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/seed.png`, policy({ resolver, allowHosts: ["img.test"], ca: undefined }), { field: "image_url" }));
    expect(err.details?.reason).toBe("unreachable");
    expect(err.message).toBe("image_url could not be downloaded"); // the TLS error is the cause, not the client's to read
    expect(String((err.cause as Error)?.message)).toMatch(/certificate/i);
  });

  it("a closed port and an open port that speaks no TLS get the same answer, with no connection error text", async () => {
    // With an internal host allowed, the error text would otherwise map its ports: ECONNREFUSED 127.0.0.1:22 for a
    // closed one, OpenSSL's "wrong version number" for an open plain-http one.
    const plain = createServer((_req, res) => void res.end("plain"));
    await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
    const open = (plain.address() as AddressInfo).port;
    try {
      const resolver = table({ "img.test": ["127.0.0.1"] });
      const closed = await refusal(fetchClientUrl(`https://img.test:${await freePort()}/x`, policy({ resolver, allowHosts: ["img.test"] }), { field: "image_url" }));
      const notTls = await refusal(fetchClientUrl(`https://img.test:${open}/x`, policy({ resolver, allowHosts: ["img.test"] }), { field: "image_url" }));
      for (const err of [closed, notTls]) {
        expect(err.status).toBe(400);
        expect(err.message).toBe("image_url could not be downloaded");
        expect(err.details).toEqual({ field: "image_url", reason: "unreachable" });
      }
      expect(String((closed.cause as Error).message)).toMatch(/ECONNREFUSED/);
    } finally {
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
    }
  });
});

describe("redirects", () => {
  const resolver = () => table({ "img.test": ["127.0.0.1"], "hop.test": ["127.0.0.1"], "public.test": ["10.0.0.7"] });
  const allowed = (r: Resolver) => policy({ resolver: r, allowHosts: ["img.test"] });

  it("a redirect from an allowed server to a loopback address is refused, and nothing connects there", async () => {
    const to = encodeURIComponent(`https://127.0.0.1:${internal.port}/latest/meta-data`);
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/redirect?to=${to}`, allowed(resolver()), { field: "image_url" }));
    expect(err.message).toBe(`image_url points at a loopback address 127.0.0.1 (redirected to https://127.0.0.1:${internal.port}); the gateway only downloads from public addresses`);
  });

  it("each hop is resolved and checked again: a redirect to a name resolving to a private address", async () => {
    const r = resolver();
    const to = encodeURIComponent(`https://public.test:${internal.port}/`);
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/redirect?to=${to}`, allowed(r), { field: "image_url" }));
    expect(err.message).toContain("resolves to a private address 10.0.0.7 (redirected to https://public.test:");
    expect(r.calls).toEqual(["img.test", "public.test"]);
  });

  it("a redirect down to plain http is refused", async () => {
    const to = encodeURIComponent(`http://hop.test:${internal.port}/`);
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/redirect?to=${to}`, allowed(resolver()), { field: "image_url" }));
    expect(err.details?.reason).toBe("not_https");
  });

  it("redirects between allowed hosts are followed, up to three", async () => {
    const r = resolver();
    const to = encodeURIComponent(`https://hop.test:${img.port}/seed.png`);
    const got = await fetchClientUrl(`https://img.test:${img.port}/redirect?to=${to}`, policy({ resolver: r, allowHosts: ["img.test", "hop.test"] }), { field: "image_url" });
    expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
    expect(got.url).toBe(`https://hop.test:${img.port}/seed.png`);
    expect(img.requests.at(-1)!.host).toBe(`hop.test:${img.port}`);
    const before = img.requests.length;
    const loop = await refusal(fetchClientUrl(`https://img.test:${img.port}/loop`, allowed(r), { field: "image_url" }));
    expect(loop.message).toBe("image_url redirects more than 3 times");
    expect(img.requests.length - before).toBe(4); // the request and three redirects followed
  });
});

describe("DNS rebinding", () => {
  it("the connection goes to the address that was checked, never to a later DNS answer", async () => {
    // Two servers on one port: 127.0.0.2 stands for the vetted answer, 127.0.0.1 for what a rebinding DNS server
    // answers next. The name is allowlisted only so a loopback answer counts as vetted here; the pinning is the
    // same code path for every host.
    const vetted = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1), { host: "127.0.0.2" });
    const rebound = await startHttpsLoopback((_req, res) => void res.writeHead(200).end("internal"), { host: "127.0.0.1", port: vetted.port });
    try {
      const r = table({ "rebind.test": [["127.0.0.2"], ["127.0.0.1"]] });
      const got = await fetchClientUrl(`https://rebind.test:${vetted.port}/seed.png`, policy({ resolver: r, allowHosts: ["rebind.test"] }), { field: "image_url" });
      expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
      expect(r.calls).toEqual(["rebind.test"]);
      expect(vetted.requests).toHaveLength(1);
      expect(rebound.connections).toBe(0);
    } finally {
      await vetted.close();
      await rebound.close();
    }
  });
});

describe("size and time", () => {
  const r = () => table({ "img.test": ["127.0.0.1"] });
  const opts = (o: Partial<UrlFetchOptions> = {}) => policy({ resolver: r(), allowHosts: ["img.test"], maxBytes: 1024, ...o });

  it("a body past max_bytes is cut off", async () => {
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/big`, opts(), { field: "image_url" }));
    expect(err.message).toBe("image_url is larger than 1024 bytes (4096)"); // told by Content-Length
    const endless = await refusal(fetchClientUrl(`https://img.test:${img.port}/endless`, opts(), { field: "image_url" }));
    expect(endless.message).toBe("image_url is larger than 1024 bytes"); // streamed, no length
    const lying = await refusal(fetchClientUrl(`https://img.test:${img.port}/huge-length`, opts(), { field: "image_url" }));
    expect(lying.details).toMatchObject({ reason: "too_large", max_bytes: 1024 });
  });

  it("a wider budget (charge) sees every chunk as it arrives and stops the download with its own refusal", async () => {
    let seen = 0;
    const over = new GatewayError(400, "INVALID_REQUEST", "image_url: over the request's total");
    const charge = (n: number) => ((seen += n) > 64 * 1024 ? over : undefined);
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/endless`, opts({ maxBytes: 1 << 30 }), { field: "image_url", charge }));
    expect(err).toBe(over);
    expect(seen).toBeLessThan(64 * 1024 + 64 * 1024); // stopped at the chunk that passed it, not at max_bytes
  });

  it("a server that never answers, and a resolver that never answers, time out", async () => {
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/hang`, opts({ timeoutMs: 200 }), { field: "image_url" }));
    expect(err.message).toBe("image_url took longer than 200 ms to download");
    expect(err.details?.reason).toBe("timeout");
    const stuck: Resolver = () => new Promise(() => {});
    const dns = await refusal(fetchClientUrl("https://cdn.example.com/a.png", policy({ resolver: stuck, timeoutMs: 200 }), { field: "image_url" }));
    expect(dns.details?.reason).toBe("timeout");
  });

  it("an error status is the client's problem, named", async () => {
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/missing.png`, opts(), { field: "image_url" }));
    expect(err.status).toBe(400);
    expect(err.message).toBe("image_url could not be downloaded: the server answered 404");
  });

  it("the request's own abort ends the download as a cancellation, not a 400", async () => {
    const ac = new AbortController();
    const p = fetchClientUrl(`https://img.test:${img.port}/hang`, opts(), { field: "image_url", signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const err = await refusal(p);
    expect(err.status).toBe(499);
  });
});

describe("through an egress proxy (server.egress_proxy, HTTPS_PROXY)", () => {
  const through = (url: string, o: Partial<UrlFetchOptions> & { no_proxy?: string[] } = {}) =>
    policy({ egress: resolveEgressProxy({ url, no_proxy: o.no_proxy }, {}).proxy, ...o });

  it("internal literals and internal-resolving names are refused before the proxy is asked", async () => {
    const proxy = await startConnectProxy();
    try {
      const resolver = table({ localhost: ["127.0.0.1"], "cdn.example.com": ["169.254.169.254"], "assets.example.com": ["93.184.216.34", "10.20.30.40"] });
      for (const url of [`https://127.0.0.1:${internal.port}/x`, "https://10.0.0.1/x", "https://[::1]/x", "https://cdn.example.com/x", "https://assets.example.com/x", `https://localhost:${internal.port}/x`]) {
        const err = await refusal(fetchClientUrl(url, through(proxy.url, { resolver }), { field: "image_url" }));
        expect(err.details?.reason, url).toBe("internal_address");
      }
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("the tunnel goes to the checked address, not the name: the proxy's own DNS cannot send it inside", async () => {
    // The gateway's DNS says public.test is public; the proxy's DNS would say loopback (the internal server). The
    // proxy is asked for the checked address, which it refuses here (nothing leaves the machine).
    const proxy = await startConnectProxy();
    proxy.dns.set("public.test", "127.0.0.1");
    proxy.refuse.add(`93.184.216.34:${internal.port}`);
    try {
      const resolver = table({ "public.test": ["93.184.216.34"] });
      const err = await refusal(fetchClientUrl(`https://public.test:${internal.port}/x`, through(proxy.url, { resolver }), { field: "image_url" }));
      expect(err.details).toMatchObject({ reason: "unreachable", proxy: proxy.url });
      expect(err.message).toBe(`image_url could not be downloaded: the egress proxy ${proxy.url} refused the tunnel to 93.184.216.34:${internal.port} (HTTP 403)`);
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`93.184.216.34:${internal.port}`]);
    } finally {
      await proxy.close();
    }
  });

  it("an allowed download goes through the tunnel; TLS and Host keep the name", async () => {
    const proxy = await startConnectProxy();
    try {
      const resolver = table({ "img.test": ["127.0.0.1"] });
      const got = await fetchClientUrl(`https://img.test:${img.port}/seed.png`, through(proxy.url, { resolver, allowHosts: ["img.test"] }), { field: "image_url" });
      expect(Buffer.from(got.bytes)).toEqual(PNG_1x1);
      expect(proxy.tunnels).toEqual([{ target: `127.0.0.1:${img.port}`, auth: undefined, status: 200 }]);
      expect(img.requests.at(-1)).toMatchObject({ path: "/seed.png", host: `img.test:${img.port}` });
    } finally {
      await proxy.close();
    }
  });

  it("a redirect is checked again before its own tunnel", async () => {
    const proxy = await startConnectProxy();
    try {
      const to = encodeURIComponent(`https://127.0.0.1:${internal.port}/latest/meta-data`);
      const resolver = table({ "img.test": ["127.0.0.1"] });
      const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/redirect?to=${to}`, through(proxy.url, { resolver, allowHosts: ["img.test"] }), { field: "image_url" }));
      expect(err.details?.reason).toBe("internal_address");
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`127.0.0.1:${img.port}`]);
    } finally {
      await proxy.close();
    }
  });

  it("a no_proxy host is fetched directly", async () => {
    const proxy = await startConnectProxy();
    try {
      const resolver = table({ "img.test": ["127.0.0.1"] });
      const got = await fetchClientUrl(`https://img.test:${img.port}/seed.png`, through(proxy.url, { resolver, allowHosts: ["img.test"], no_proxy: [".test"] }), { field: "image_url" });
      expect(got.bytes.length).toBe(PNG_1x1.length);
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("a proxy that cannot be reached: a refusal naming it (masked), not a hang", async () => {
    const resolver = table({ "img.test": ["127.0.0.1"] });
    const dead = `http://u:pw-secret@127.0.0.1:${await freePort()}`;
    const err = await refusal(fetchClientUrl(`https://img.test:${img.port}/seed.png`, through(dead, { resolver, allowHosts: ["img.test"] }), { field: "image_url" }));
    expect(err.details).toMatchObject({ reason: "unreachable", proxy: expect.stringMatching(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+$/) });
    expect(err.message).toContain("the egress proxy http://***@127.0.0.1:");
    expect(err.message).not.toContain("pw-secret");
  });
});
