// An MCP server that accepts connections and never answers (a frozen process, a wedged load balancer), beside a
// working one, as a client of {base_url}/mcp sees it. Every tools/list used to wait out the frozen server's whole
// connect timeout (60 s by default, the MCP SDK client's own request timeout, so the client got -32001 and lost the
// working server's tools too), on every list, for as long as it stayed frozen: its failures never reached its
// breaker. And a list pending when the gateway shut down had its stream ended with no answer at all.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient } from "./mcp/gateway.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";

const KEY = testKey("mcpfrozen");

/** A TCP endpoint that accepts every connection and never writes a byte; counts the connections it was offered. */
interface Blackhole { url: string; connections: number; connected(): Promise<void>; close(): Promise<void> }

async function startBlackhole(): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let waiters: Array<() => void> = [];
  const hole: Blackhole = {
    url: "",
    connections: 0,
    connected: () => new Promise((r) => waiters.push(r)),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createServer((s) => {
    hole.connections++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hole.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  return hole;
}

const gatewayConfig = (bh: Record<string, unknown>, docsUrl: string) => ({
  store: { kind: "memory" },
  routing: { circuit_breaker: { consecutive_failures: 2, cooldown_ms: 600_000 } },
  mcp_servers: { bh, docs: { url: docsUrl, timeout_ms: 5000 } },
  projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
});

const names = (r: { tools: Array<{ name: string }> }) => r.tools.map((t) => t.name).sort();
const DOCS_TOOLS = ["docs__add", "docs__echo", "docs__fail", "docs__slow", "docs__whoami"];

async function circuitState(gw: TestGateway, model: string): Promise<number | undefined> {
  const metric = gw.gateway.metrics.registry.getSingleMetric("gateway_circuit_state"); // none before any breaker
  return metric ? (await metric.get()).values.find((v) => v.labels.model === model)?.value : undefined;
}

let docs: TestMcpHttpServer;
let hole: Blackhole;

beforeAll(async () => {
  docs = await startMcpHttpServer("docs");
  hole = await startBlackhole();
});

afterAll(async () => {
  await docs?.close();
  await hole?.close();
});

describe("a frozen MCP server beside a working one", () => {
  it("with its timeout_ms: lists answer with the working server's tools, its failures open its breaker, and then it is not tried at all", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url, timeout_ms: 1000 }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      const before = hole.connections;
      // Concurrent lists: one connection attempt between them, each answered with what the working server has.
      const lists = await Promise.all([client.listTools(), client.listTools(), client.listTools()]);
      for (const l of lists) expect(names(l)).toEqual(DOCS_TOOLS);
      expect(hole.connections - before).toBe(1);
      // Those failures reached the server's breaker (consecutive_failures: 2): open, so no list waits on it again.
      expect(await circuitState(gw, "mcp:bh")).toBe(2);
      const tried = hole.connections;
      for (let i = 0; i < 3; i++) expect(names(await client.listTools())).toEqual(DOCS_TOOLS);
      expect(hole.connections).toBe(tried);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("with the default timeout_ms: a list answers before the MCP client's own 60 s request timeout, with the working server's tools", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      // The SDK's default request timeout (60 s): before, the frozen server's 60 s connect took the list past it.
      expect(names(await client.listTools())).toEqual(DOCS_TOOLS);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 120_000);
});

describe("a list pending when the gateway shuts down", () => {
  it("is answered with a JSON-RPC error saying the gateway is shutting down, not a stream that ends with no answer", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      const connected = hole.connected();
      // A request timeout well past the shutdown: without an answer the client would wait it out.
      const list = client.listTools(undefined, { timeout: 45_000 }).then(() => "answered", (err: Error) => err.message);
      await connected; // the list is waiting on the frozen server
      await gw.shutdown({ graceMs: 50 });
      expect(await list).toMatch(/^MCP error -32000: The gateway is shutting down; retry the request/);
    } finally {
      await gw.close().catch(() => {});
    }
  }, 90_000);
});
