// Shared set-up for the MCP tests: a gateway (SQLite store, full default pipeline) fronting the two test servers,
// and an SDK client of its /mcp endpoint.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const STDIO_SERVER = join(import.meta.dirname, "stdio-server.ts");

/** The stdio test server as gateway.yaml names it: this Node, with tsx to run TypeScript. */
export function stdioServerConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: ["--import", "tsx", STDIO_SERVER], timeout_ms: 15_000, ...extra };
}

export async function mcpClient(url: string, key: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } } });
  await client.connect(transport);
  return { client, transport };
}

export const textOf = (r: any): string => (r.content ?? []).map((c: any) => c.text ?? "").join("");
