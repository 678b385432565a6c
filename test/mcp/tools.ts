// The tools both test MCP servers register (written with the official SDK's McpServer): echo, add, a slow one that
// reports progress and notices cancellation, and whoami (which server, which process, what credentials it got).
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

export interface ToolLog {
  /** Tool calls whose cancellation reached the server. */
  cancelled: string[];
}

export function registerTools(server: McpServer, who: string, log: ToolLog, credential: () => string | undefined): void {
  server.registerTool("echo", { description: `Echo the text back (${who})`, inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `${who}: ${text}` }] }));
  server.registerTool("add", { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerTool("whoami", { description: "Which server and process answered, and the credential it was given" },
    async () => ({ content: [{ type: "text", text: JSON.stringify({ who, pid: process.pid, credential: credential() ?? null }) }] }));
  server.registerTool("slow", { description: "Counts to `steps`, one progress notification a step, 100 ms apart", inputSchema: { steps: z.number(), id: z.string() } },
    async ({ steps, id }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if (extra.signal.aborted) {
          log.cancelled.push(id);
          return { content: [{ type: "text", text: "cancelled" }], isError: true };
        }
        if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
      }
      return { content: [{ type: "text", text: `counted to ${steps}` }] };
    });
  server.registerTool("fail", { description: "Always a tool error" }, async () => ({ content: [{ type: "text", text: "it failed, as asked" }], isError: true }));
}
