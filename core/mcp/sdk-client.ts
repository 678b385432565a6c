// The MCP SDK's client side, which core/mcp/upstream.ts loads on first connect: the SDK and zod take ~7 MB of heap
// and ~20 MB of RSS, which a gateway that never talks to an MCP server should not carry.
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
export { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
export {
  CallToolResultSchema, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
