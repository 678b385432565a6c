// A healthy MCP server that is slow to connect (its initialize answered after the 10 s a list waits for a server),
// as an MCP client of {base_url}/api/v1/mcp sees it when it sends several lists at once. Every list waiting on the
// one shared connection used to count a failure against the server's breaker when its own wait ended: five
// concurrent lists were five consecutive failures, the circuit opened, and the lists and tool calls after the server
// had connected were refused until the cooldown's probe, though the shared connect succeeded (never counted).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, textOf } from "./mcp/gateway.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";

const KEY = testKey("mcpslowconnect");
const names = (r: { tools: Array<{ name: string }> }) => r.tools.map((t) => t.name).sort();
const SLOW_TOOLS = ["slow__add", "slow__echo", "slow__fail", "slow__slow", "slow__whoami"];

async function circuitState(gw: TestGateway, model: string): Promise<number | undefined> {
  const metric = gw.gateway.metrics.registry.getSingleMetric("gateway_circuit_state");
  return metric ? (await metric.get()).values.find((v) => v.labels.model === model)?.value : undefined;
}

/** The slow server's initialize waits for this gate, which the test opens once the lists have given up on it. */
let openGate!: () => void;
const gate = new Promise<void>((r) => { openGate = r; });
let slow: TestMcpHttpServer;

beforeAll(async () => {
  slow = await startMcpHttpServer("slow", { beforeInitialize: () => gate });
});

afterAll(async () => {
  openGate();
  await slow?.close();
});

describe("an MCP server slower to connect than a list waits, listed by concurrent lists", () => {
  it("keeps its circuit closed, and the list after it connected has its tools", async () => {
    const gw = await startTestGateway({
      store: { kind: "memory" },
      routing: { circuit_breaker: { consecutive_failures: 5, cooldown_ms: 600_000 } },
      mcp_servers: { slow: { url: slow.url, timeout_ms: 60_000 } },
      projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
    });
    try {
      const { client } = await mcpClient(`${gw.url}/api/v1/mcp`, KEY);
      // Five lists at once, all waiting on the one connection: each gives up on the server after 10 s.
      const lists = await Promise.all(Array.from({ length: 5 }, () => client.listTools()));
      for (const l of lists) expect(names(l)).toEqual([]);
      // Now the server answers: the connection the lists shared succeeds.
      openGate();
      const after = await client.listTools();
      expect(names(after)).toEqual(SLOW_TOOLS);
      expect(await circuitState(gw, "mcp:slow")).toBe(0);
      // And its tools can be called (not refused "circuit open").
      const r = await client.callTool({ name: "slow__echo", arguments: { text: "hi" } });
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toContain("hi");
      await client.close();
    } finally {
      await gw.close();
    }
  }, 90_000);
});
