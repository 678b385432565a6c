// A local MCP server over stdio (the gateway starts it as a child process): the shared tools, `crash` (the process
// exits in the middle of the call), and `cancelled` (the ids of calls whose cancellation arrived).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { registerTools, type ToolLog } from "./tools.ts";

const log: ToolLog = { cancelled: [] };
const server = new McpServer({ name: "files", version: "1.0.0" });
registerTools(server, "files", log, () => process.env.FILES_TOKEN);
server.registerTool("crash", { description: "Exits the server process mid-call", inputSchema: { after_ms: z.number().optional() } }, async ({ after_ms }) => {
  await new Promise((r) => setTimeout(r, after_ms ?? 50));
  process.exit(3);
});
server.registerTool("cancelled", { description: "Ids of calls whose cancellation reached this server" }, async () => ({ content: [{ type: "text", text: JSON.stringify(log.cancelled) }] }));
server.registerPrompt("review", { description: "Review a file", argsSchema: { path: z.string() } }, ({ path }) => ({
  messages: [{ role: "user", content: { type: "text", text: `Review ${path}` } }],
}));
await server.connect(new StdioServerTransport());
