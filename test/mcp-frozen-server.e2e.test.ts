// An MCP server that accepts connections and never answers (a frozen process, a wedged load balancer), beside a
// working one, as a client of {base_url}/mcp sees it. Every tools/list used to wait out the frozen server's whole
// connect timeout (60 s by default, the MCP SDK client's own request timeout, so the client got -32001 and lost the
// working server's tools too), on every list, for as long as it stayed frozen: its failures never reached its
// breaker. And a list pending when the gateway shut down had its stream ended with no answer at all.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, textOf } from "./mcp/gateway.ts";
import { healthOf } from "../core/health/index.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { startBlackhole, type Blackhole } from "./mcp/blackhole.ts";

const KEY = testKey("mcpfrozen");

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
  it("with its timeout_ms: lists answer with the working server's tools, each failed connection attempt counts once against its breaker, which opens, and then it is not tried at all", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url, timeout_ms: 1000 }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      const before = hole.initializes;
      // Concurrent lists: one connection attempt between them, each answered with what the working server has.
      const lists = await Promise.all([client.listTools(), client.listTools(), client.listTools()]);
      for (const l of lists) expect(names(l)).toEqual(DOCS_TOOLS);
      expect(hole.initializes - before).toBe(1);
      // That one attempt is one failure, however many lists waited on it (consecutive_failures: 2): still closed.
      expect(await circuitState(gw, "mcp:bh")).toBe(0);
      // The next attempt's failure reaches the breaker too: open, so no list waits on it again.
      await vi.waitFor(async () => {
        expect(names(await client.listTools())).toEqual(DOCS_TOOLS);
        expect(await circuitState(gw, "mcp:bh")).toBe(2);
      }, { timeout: 30_000, interval: 50 });
      expect(hole.initializes - before).toBe(2);
      const tried = hole.initializes;
      for (let i = 0; i < 3; i++) expect(names(await client.listTools())).toEqual(DOCS_TOOLS);
      expect(hole.initializes).toBe(tried);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("a client's first lists of every kind, on one failed connection attempt, count once against its breaker", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url, timeout_ms: 1000 }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      const before = hole.initializes;
      // What a client asks for at start, at once: four lists, one attempt between them (consecutive_failures: 2).
      const [tools] = await Promise.all([client.listTools(), client.listPrompts(), client.listResources(), client.listResourceTemplates()]);
      expect(names(tools)).toEqual(DOCS_TOOLS);
      expect(hole.initializes - before).toBe(1);
      // Wait for that attempt's end (a list sharing it), then the breaker has heard one failure: still closed.
      expect(names(await client.listTools())).toEqual(DOCS_TOOLS);
      expect(await circuitState(gw, "mcp:bh")).toBe(0);
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

describe("a tool call to a frozen server", () => {
  // Its timeout_ms is the default 60 s: no test below may take that long. A frozen server of its own: the attempts
  // left running here (60 s each) are not another test's to meet.
  let hole: Blackhole;
  beforeAll(async () => { hole = await startBlackhole(); });
  afterAll(async () => { await hole?.close(); });

  it("whose circuit is open is refused at once, nothing sent to it", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      // Opened as its failures would (consecutive_failures: 2), without waiting out two 60 s connects.
      for (let i = 0; i < 2; i++) healthOf(gw.gateway).record("mcp:bh", "bh", false);
      const before = hole.connections;
      const r = await client.callTool({ name: "bh__anything", arguments: {} }, undefined, { timeout: 120_000 });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe('MCP server "bh" is failing; calls are paused for a while (circuit open)');
      expect(hole.connections).toBe(before);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 20_000);

  it("whose circuit is closed waits for its tool list (the name check) no longer than a list does, and is unavailable", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      // The client waits longer than the server's 60 s: the gateway must answer first, within a list's 10 s.
      const r = await client.callTool({ name: "bh__anything", arguments: {} }, undefined, { timeout: 120_000 });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe('MCP server "bh" is not available: MCP server "bh" did not list its tools within 10000 ms');
      await client.close();
    } finally {
      await gw.close();
    }
  }, 45_000);

  it("and a list sharing its one failed connection attempt count that attempt once against the breaker", async () => {
    const gw = await startTestGateway(gatewayConfig({ url: hole.url, timeout_ms: 1000 }, docs.url));
    try {
      const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
      const warn = vi.spyOn(gw.gateway.log, "warn");
      const before = hole.initializes;
      const [list, call] = await Promise.all([client.listTools(), client.callTool({ name: "bh__anything", arguments: {} })]);
      expect(names(list)).toEqual(DOCS_TOOLS);
      expect(call.isError).toBe(true);
      expect(textOf(call)).toMatch(/^MCP server "bh" is not available: /);
      expect(hole.initializes - before).toBe(1);
      // The attempt has failed (it says so as it fails), and what waited on it has heard it (consecutive_failures: 2).
      await vi.waitFor(() => expect(warn).toHaveBeenCalledWith("mcp server could not connect", expect.objectContaining({ server: "bh" })), { timeout: 10_000, interval: 20 });
      await new Promise((r) => setImmediate(r));
      expect(await circuitState(gw, "mcp:bh")).toBe(0);
      await client.close();
    } finally {
      await gw.close();
    }
  }, 30_000);
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
