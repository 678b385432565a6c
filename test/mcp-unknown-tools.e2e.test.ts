// Made-up tool names on {base_url}/mcp: a name the upstream server does not list is refused by the gateway (JSON-RPC
// -32602, as for a tool outside allow_tools) before the server sees it, and never becomes a metric series, a ledger
// row or a line of its own; a server name the project cannot see is refused the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { startTestGateway, keyEntry, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, stdioServerConfig, textOf } from "./mcp/gateway.ts";

const KEY = testKey("mcpunknown");
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "ledger.db" },
    mcp_servers: { files: stdioServerConfig() },
    projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
});

const metrics = async () => (await fetch(gw.metricsUrl!)).text();
const series = (text: string, name: string) => text.split("\n").filter((l) => l.startsWith(name)).length;
const made = (n: number) => randomBytes(n).toString("hex").slice(0, n);

async function refused(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(McpError);
  expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  return err as McpError;
}

describe("unknown tool names on the MCP endpoint", () => {
  it("are refused with -32602 and leave /metrics and the ledger as they were; a known tool still counts under its name", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 1, b: 2 } }))).toBe("3");
      // One refusal first: every unknown name shares one series, tool="(unknown)".
      await refused(client.callTool({ name: "files__nope" }));
      const before = await metrics();
      const calls = series(before, "gateway_mcp_tool_calls_total{");
      const durations = series(before, "gateway_mcp_tool_call_duration_seconds");
      const rowsBefore = (await gw.gateway.store.ledger({ project: "acme" })).length;

      const names: string[] = [];
      for (let i = 0; i < 25; i++) {
        const name = `files__${made(i % 5 === 0 ? 20_000 : 40)}`;
        names.push(name);
        const err = await refused(client.callTool({ name, arguments: {} }));
        expect(err.message).toContain("Unknown tool");
      }
      // A server prefix the gateway does not know is no series either.
      for (let i = 0; i < 5; i++) await refused(client.callTool({ name: `nosuch${made(12)}__x` }));

      const after = await metrics();
      expect(series(after, "gateway_mcp_tool_calls_total{")).toBe(calls);
      expect(series(after, "gateway_mcp_tool_call_duration_seconds")).toBe(durations);
      expect(after.length).toBeLessThan(before.length + 2_000);
      for (const n of names) expect(after).not.toContain(n.slice(7, 47));
      expect(after).toMatch(/gateway_mcp_tool_calls_total\{server="files",tool="\(unknown\)",status="unknown_tool"\} 26/);
      expect(after).not.toContain("nosuch");
      // Nothing ran, so nothing was recorded.
      expect((await gw.gateway.store.ledger({ project: "acme" })).length).toBe(rowsBefore);

      // A tool the server lists is still counted (and timed) under its own name.
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 2, b: 2 } }))).toBe("4");
      const last = await metrics();
      expect(last).toMatch(/gateway_mcp_tool_calls_total\{server="files",tool="add",status="ok"\} 2/);
      expect(last).toMatch(/gateway_mcp_tool_call_duration_seconds_count\{server="files",tool="add"\} 2/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
