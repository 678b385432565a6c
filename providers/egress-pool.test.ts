// Provider calls through an egress proxy: UpstreamClient against a loopback CONNECT proxy in front of a loopback
// upstream. What is asserted is what the proxy and the upstream saw (tunnels, connections) and what the caller got.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { UpstreamClient, readUpstreamBody, readUpstreamJson } from "./http.ts";
import { GatewayError } from "../core/errors.ts";
import { resolveEgressProxy, type EgressProxyConfig } from "../core/net/egress-proxy.ts";
import { listenLoopback, type Loopback } from "../test/upstreams/http-fake.ts";
import { startConnectProxy, type ConnectProxy } from "../test/helpers/connect-proxy.ts";
import { freePort } from "../test/helpers/ports.ts";

let upstream: Loopback;
let proxy: ConnectProxy;
/** Connections the upstream accepted, and requests it is holding (answered when released). */
let connections = 0;
let held: ServerResponse[] = [];
let hold = false;

beforeAll(async () => {
  upstream = await listenLoopback((req, res) => {
    if (hold) return void held.push(res);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url, host: req.headers.host }));
  });
  proxy = await startConnectProxy();
});
afterAll(async () => {
  await upstream?.close();
  await proxy?.close();
});
beforeEach(() => {
  proxy.tunnels.length = 0;
  proxy.hang = false;
  hold = false;
  held = [];
});

const egress = (config: EgressProxyConfig) => resolveEgressProxy(config, {}).proxy;

async function failure(p: Promise<unknown>): Promise<GatewayError> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

const post = (client: UpstreamClient, origin = upstream.origin) =>
  client.send({ url: `${origin}/v1/chat/completions`, headers: { "content-type": "application/json" }, body: "{}" }, new AbortController().signal);

/**
 * A call's status, its answer read to the end as every caller of send() does. Left unread, an answer's body stays open
 * with its answer deadline armed, and fired 10 minutes later in whichever test file the worker was running then.
 */
async function answered(client: UpstreamClient, origin = upstream.origin): Promise<number> {
  const res = await post(client, origin);
  await readUpstreamBody("openai", res, "answer");
  return res.status;
}

describe("provider calls through the egress proxy", () => {
  it("go through CONNECT tunnels to the upstream's host:port, kept alive for the next calls, Host unchanged", async () => {
    const client = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress({ url: proxy.url }) });
    try {
      for (let i = 0; i < 6; i++) {
        const res = await post(client);
        expect(res.status).toBe(200);
        expect(await readUpstreamJson("openai", res)).toEqual({ path: "/v1/chat/completions", host: `127.0.0.1:${upstream.port}` });
      }
      // A direct pool opens a second connection as well (a call sent while the first one's is being freed).
      expect(proxy.tunnels.length).toBeGreaterThan(0);
      expect(proxy.tunnels.length).toBeLessThan(6);
      for (const t of proxy.tunnels) expect(t).toEqual({ target: `127.0.0.1:${upstream.port}`, auth: undefined, status: 200 });
    } finally {
      await client.close();
    }
  });

  it("keep the pool's connections cap: 6 calls at once on connections: 2 open 2 tunnels, and all 6 are answered", async () => {
    const client = new UpstreamClient("openai", { connections: 2, timeoutMs: 5000, egress: egress({ url: proxy.url }) });
    try {
      hold = true;
      const calls = Array.from({ length: 6 }, () => answered(client));
      while (held.length < 2) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50)); // room for a third connection, were the cap not kept
      expect(held).toHaveLength(2);
      expect(proxy.tunnels).toHaveLength(2);
      hold = false;
      for (const res of held) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      const answers = await Promise.all(calls);
      expect(answers).toEqual([200, 200, 200, 200, 200, 200]);
      expect(proxy.tunnels).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it("skip the proxy for a no_proxy host, and for every host when the config has no url", async () => {
    for (const config of [{ url: proxy.url, no_proxy: ["127.0.0.1"] }, { url: proxy.url, no_proxy: ["*"] }, {}]) {
      const client = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress(config) });
      try {
        expect(await answered(client)).toBe(200);
      } finally {
        await client.close();
      }
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it("send the URL's user and password as Proxy-Authorization on each CONNECT, never to the upstream", async () => {
    const locked = await startConnectProxy({ user: "alice", password: "s3cret pass" });
    let seen: string | undefined = "unset";
    const up = await listenLoopback((req, res) => {
      seen = req.headers["proxy-authorization"];
      res.writeHead(200).end("{}");
    });
    const client = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress({ url: locked.url }) });
    try {
      expect(await answered(client, up.origin)).toBe(200);
      expect(locked.tunnels).toEqual([{ target: `127.0.0.1:${up.port}`, auth: `Basic ${Buffer.from("alice:s3cret pass").toString("base64")}`, status: 200 }]);
      expect(seen).toBeUndefined();
    } finally {
      await client.close();
      await up.close();
      await locked.close();
    }
  });
});

describe("a proxy that fails the call", () => {
  it("407 (wrong password): a retryable 502 naming the proxy masked and what to check", async () => {
    const locked = await startConnectProxy({ user: "alice", password: "right" });
    const client = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress({ url: locked.url.replace("right", "wr0ng-secret") }) });
    try {
      const err = await failure(post(client));
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true });
      expect(err.message).toBe(`Could not reach provider openai: the egress proxy http://***@127.0.0.1:${locked.port} refused the tunnel to 127.0.0.1:${upstream.port} (HTTP 407: Proxy Authentication Required, check the user and password of its URL)`);
      expect(err.details).toMatchObject({ provider: "openai", proxy: `http://***@127.0.0.1:${locked.port}`, proxy_status: 407 });
      expect(JSON.stringify(err.toJSON())).not.toContain("wr0ng-secret");
    } finally {
      await client.close();
      await locked.close();
    }
  });

  it("CONNECT refused (403): a retryable 502 naming the proxy and the status", async () => {
    proxy.refuse.add(`127.0.0.1:${upstream.port}`);
    const client = new UpstreamClient("anthropic", { timeoutMs: 5000, egress: egress({ url: proxy.url }) });
    try {
      const err = await failure(post(client));
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { proxy: proxy.url, proxy_status: 403 } });
      expect(err.message).toContain(`the egress proxy ${proxy.url} refused the tunnel to 127.0.0.1:${upstream.port} (HTTP 403)`);
    } finally {
      proxy.refuse.clear();
      await client.close();
    }
  });

  it("nothing listening at the proxy: a retryable 502 naming the proxy", async () => {
    const dead = `http://bob:hunter2-secret@127.0.0.1:${await freePort()}`;
    const client = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress({ url: dead }) });
    try {
      const err = await failure(post(client));
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true });
      expect(err.message).toMatch(/^Could not reach provider openai through the egress proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      expect(JSON.stringify(err.toJSON())).not.toContain("hunter2");
    } finally {
      await client.close();
    }
  });

  it("a proxy that never answers CONNECT: the provider's timeout applies (504 naming the proxy), no hang", async () => {
    proxy.hang = true;
    const client = new UpstreamClient("openai", { timeoutMs: 300, egress: egress({ url: proxy.url }) });
    try {
      const started = performance.now();
      const err = await failure(post(client));
      const took = performance.now() - started;
      // Cut on the gateway's clock, said as a direct stall is: not by undici's CONNECT backstop a second later
      // (reason UND_ERR_HEADERS_TIMEOUT, ~1.3 s for a 300 ms timeout).
      expect(err).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", retryable: true, details: { proxy: proxy.url, reason: "headers_timeout", timeout_ms: 300 } });
      expect(took).toBeLessThan(300 + 1000);
      expect(err.message).toBe(`Provider openai did not respond within 300 ms through the egress proxy ${proxy.url}`);
      expect(proxy.tunnels).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe("a tunnel dropped mid-answer", () => {
  it("is a retryable 502 naming the proxy (masked), as a failed connect is; a direct call's says no proxy", async () => {
    const locked = await startConnectProxy({ user: "alice", password: "m1d-secret" });
    // Headers and the first bytes of a stream, then the connection drops.
    const up = await listenLoopback((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: {}\n\n", () => res.socket?.destroy());
    });
    const read = async (client: UpstreamClient) => {
      const res = await post(client, up.origin);
      expect(res.status).toBe(200);
      return failure(readUpstreamBody("openai", res, "answer"));
    };
    const proxied = new UpstreamClient("openai", { timeoutMs: 5000, egress: egress({ url: locked.url }) });
    const direct = new UpstreamClient("openai", { timeoutMs: 5000 });
    try {
      const err = await read(proxied);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "openai", proxy: `http://***@127.0.0.1:${locked.port}` } });
      expect(err.message).toMatch(new RegExp(`^Could not reach provider openai through the egress proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${locked.port}: `));
      expect(JSON.stringify(err.toJSON())).not.toContain("m1d-secret");
      const plain = await read(direct);
      expect(plain).toMatchObject({ status: 502, code: "UPSTREAM_ERROR" });
      expect(plain.message).toMatch(/^Could not reach provider openai: /);
      expect(plain.details).not.toHaveProperty("proxy");
    } finally {
      await proxied.close();
      await direct.close();
      await up.close();
      await locked.close();
    }
  });
});
