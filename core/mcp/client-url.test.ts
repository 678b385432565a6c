// A client's MCP server_url behind an egress proxy: checked first, then reached through a tunnel to the checked
// address. Loopback servers only; names resolve through the system resolver (localhost).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { lookup } from "node:dns/promises";
import type { AddressInfo } from "node:net";
import { checkClientMcpUrl } from "./client-url.ts";
import { GatewayError } from "../errors.ts";
import { resolveEgressProxy } from "../net/egress-proxy.ts";
import type { UrlFetchPolicy } from "../net/url-fetch.ts";
import { startConnectProxy, type ConnectProxy } from "../../test/helpers/connect-proxy.ts";

let proxy: ConnectProxy;
let server: Server;
let first: { address: string; family: number };
let hits = 0;

beforeAll(async () => {
  proxy = await startConnectProxy();
  // Where localhost leads first: the address the guard checks and pins.
  first = (await lookup("localhost", { all: true, verbatim: true }))[0]!;
  server = createServer((req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: req.headers.host }));
  });
  await new Promise<void>((r) => server.listen(0, first.address, () => r()));
});
afterAll(async () => {
  await proxy?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
});
beforeEach(() => {
  proxy.tunnels.length = 0;
  hits = 0;
});

const policy = (o: Partial<UrlFetchPolicy> = {}): UrlFetchPolicy => ({
  allowHosts: [], maxBytes: 1024, timeoutMs: 5000, egress: resolveEgressProxy({ url: proxy.url }, {}).proxy, ...o,
});

describe("checkClientMcpUrl through an egress proxy", () => {
  it("refuses internal addresses and names before the proxy hears of them", async () => {
    for (const url of ["https://127.0.0.1/mcp", "https://10.1.2.3/mcp", "https://[::1]/mcp", "https://localhost/mcp", "https://169.254.169.254/mcp"]) {
      const err = await checkClientMcpUrl(url, policy(), "tools[0].server_url").then(() => undefined, (e) => e);
      expect(err, url).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).details, url).toMatchObject({ field: "tools[0].server_url", reason: "internal_address" });
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it("reaches an allowed server through a tunnel to the checked address, Host keeping the name", async () => {
    const port = (server.address() as AddressInfo).port;
    const checked = await checkClientMcpUrl(`http://localhost:${port}/mcp`, policy({ allowHosts: ["localhost"] }), "tools[0].server_url");
    try {
      const res = await checked.fetch(`http://localhost:${port}/mcp`, { method: "POST", body: "{}" });
      expect(await res.json()).toEqual({ host: `localhost:${port}` });
      const bracketed = first.family === 6 ? `[${first.address}]` : first.address;
      expect(proxy.tunnels.map((t) => t.target)).toEqual([`${bracketed}:${port}`]);
    } finally {
      await checked.close();
    }
  });

  it("a no_proxy host is reached directly", async () => {
    const port = (server.address() as AddressInfo).port;
    const egress = resolveEgressProxy({ url: proxy.url, no_proxy: ["localhost"] }, {}).proxy;
    const checked = await checkClientMcpUrl(`http://localhost:${port}/mcp`, policy({ allowHosts: ["localhost"], egress }), "tools[0].server_url");
    try {
      expect((await checked.fetch(`http://localhost:${port}/mcp`, { method: "POST", body: "{}" })).status).toBe(200);
      expect(hits).toBe(1);
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await checked.close();
    }
  });
});
