// A local MCP server whose tools/list takes LIST_DELAY_MS (a slow but healthy server) and whose one tool, echo,
// answers at once with TAG, which tells its configurations apart.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const delay = Number(process.env.LIST_DELAY_MS || 0);
const tag = process.env.TAG || "v1";
const server = new Server({ name: "slowlist", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  await new Promise((r) => setTimeout(r, delay));
  return { tools: [{ name: "echo", description: "Echo text back", inputSchema: { type: "object", properties: { text: { type: "string" } } } }] };
});
server.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: "text", text: `${tag}: ${String(r.params.arguments?.text)}` }] }));
await server.connect(new StdioServerTransport());
