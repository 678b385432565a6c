import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { request as httpsRequest } from "node:https";
import { request as httpRequest, type Agent } from "node:http";
import { Client } from "undici";
import { openTunnel, ProxyTunnelError, tunnelAgent, tunnelConnector, tunnelTarget } from "./proxy-tunnel.ts";
import { resolveEgressProxy, type ProxyRoute } from "./egress-proxy.ts";
import { startConnectProxy, type ConnectProxy } from "../../test/helpers/connect-proxy.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../test/helpers/https-loopback.ts";
import { listenLoopback, type Loopback } from "../../test/upstreams/http-fake.ts";
import { freePort } from "../../test/helpers/ports.ts";

let proxy: ConnectProxy;
let img: HttpsLoopback;
let plain: Loopback;
const route = (url: string): ProxyRoute => resolveEgressProxy({ url }, {}).proxy!.https!;

beforeAll(async () => {
  proxy = await startConnectProxy();
  proxy.dns.set("img.test", "127.0.0.1");
  img = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1));
  plain = await listenLoopback((req, res) => void res.writeHead(200).end(`plain ${req.headers.host}`));
});
afterAll(async () => {
  await proxy?.close();
  await img?.close();
  await plain?.close();
});
beforeEach(() => {
  proxy.tunnels.length = 0;
  proxy.hang = false;
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe("openTunnel", () => {
  it("names IPv6 targets in brackets", () => {
    expect(tunnelTarget("::1", 443)).toBe("[::1]:443");
    expect(tunnelTarget("[::1]", 443)).toBe("[::1]:443");
    expect(tunnelTarget("api.openai.com", 443)).toBe("api.openai.com:443");
  });

  it("a proxy asking for credentials (407): an error naming it masked, the password never", async () => {
    const locked = await startConnectProxy({ user: "alice", password: "right" });
    try {
      const err = await rejection(openTunnel(route(locked.url.replace("right", "wr0ng-pass")), "example.com:443", 5000));
      expect(err).toBeInstanceOf(ProxyTunnelError);
      expect(err.message).toBe(`the egress proxy http://***@127.0.0.1:${locked.port} refused the tunnel to example.com:443 (HTTP 407: Proxy Authentication Required, check the user and password of its URL)`);
      expect((err as ProxyTunnelError).status).toBe(407);
      expect(locked.tunnels[0]!.auth).toBe(`Basic ${Buffer.from("alice:wr0ng-pass").toString("base64")}`);
    } finally {
      await locked.close();
    }
  });

  it("nothing listening, or no answer to CONNECT within the timeout: an error naming the proxy", async () => {
    const dead = await rejection(openTunnel(route(`http://127.0.0.1:${await freePort()}`), "example.com:443", 5000));
    expect(dead.message).toMatch(/^the egress proxy http:\/\/127\.0\.0\.1:\d+ could not be reached \(.*ECONNREFUSED/);
    proxy.hang = true;
    const silent = await rejection(openTunnel(route(proxy.url), "example.com:443", 200));
    expect(silent.message).toBe(`the egress proxy ${proxy.url} did not answer CONNECT within 200 ms`);
  });
});

describe("tunnelConnector (the client-URL guard's)", () => {
  it("tunnels to the checked address, while TLS and Host keep the URL's name", async () => {
    const client = new Client(`https://img.test:${img.port}`, { connect: tunnelConnector(route(proxy.url), { timeoutMs: 5000, address: "127.0.0.1", tls: { ca: TEST_CERT } }) });
    try {
      const r = await client.request({ path: "/seed.png", method: "GET" });
      expect(r.statusCode).toBe(200);
      expect(Buffer.from(await r.body.arrayBuffer())).toEqual(PNG_1x1);
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`127.0.0.1:${img.port}`]);
      expect(img.requests.at(-1)).toMatchObject({ path: "/seed.png", host: `img.test:${img.port}` });
    } finally {
      await client.close();
    }
  });

  it("checks the certificate against the URL's name, not the address tunnelled to", async () => {
    const client = new Client(`https://not-in-the-cert.test:${img.port}`, { connect: tunnelConnector(route(proxy.url), { timeoutMs: 5000, address: "127.0.0.1", tls: { ca: TEST_CERT } }) });
    try {
      const err = await rejection(client.request({ path: "/seed.png", method: "GET" }));
      expect(err.message).toMatch(/not-in-the-cert\.test/);
    } finally {
      await client.destroy();
    }
  });
});

describe("tunnelAgent (node:http clients: the OTLP exporter)", () => {
  const get = (req: typeof httpRequest, url: string, agent: Agent, extra: Record<string, unknown> = {}) =>
    new Promise<{ status?: number; body: string }>((resolve, reject) => {
      req(url, { agent, ...extra }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode, body }));
      }).on("error", reject).end();
    });

  it("http: through a tunnel by name, kept alive", async () => {
    const agent = tunnelAgent(route(proxy.url), "http:", 5000);
    try {
      const url = `http://localhost:${plain.port}/v1/traces`;
      expect(await get(httpRequest, url, agent)).toEqual({ status: 200, body: `plain localhost:${plain.port}` });
      expect(await get(httpRequest, url, agent)).toEqual({ status: 200, body: `plain localhost:${plain.port}` });
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`localhost:${plain.port}`]);
    } finally {
      agent.destroy();
    }
  });

  it("https: TLS to the URL's name inside the tunnel", async () => {
    const agent = tunnelAgent(route(proxy.url), "https:", 5000);
    try {
      const r = await get(httpsRequest as unknown as typeof httpRequest, `https://img.test:${img.port}/x`, agent, { ca: TEST_CERT, lookup: () => { throw new Error("no DNS: the proxy resolves"); } });
      expect(r.status).toBe(200);
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`img.test:${img.port}`]);
    } finally {
      agent.destroy();
    }
  });
});
