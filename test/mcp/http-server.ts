// A remote MCP server over Streamable HTTP on loopback, written with the official SDK (stateful sessions): the shared
// tools plus a resource, a way to add a tool at run time (list_changed), and the Authorization header it last saw.
import { createServer, type Server } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { registerTools, type ToolLog } from "./tools.ts";

export interface TestMcpHttpServer {
  url: string;
  log: ToolLog;
  /** Authorization headers of the requests it received, in order. */
  authorizations: Array<string | undefined>;
  /** Register one more tool on every session (each sends notifications/tools/list_changed). */
  addTool(name: string): void;
  close(): Promise<void>;
}

export interface TestMcpHttpServerOptions {
  /** Awaited before an initialize is answered: a server that is slow to connect for as long as the test says. */
  beforeInitialize?: () => Promise<void>;
}

export async function startMcpHttpServer(who = "docs", opts: TestMcpHttpServerOptions = {}): Promise<TestMcpHttpServer> {
  const log: ToolLog = { cancelled: [] };
  const authorizations: Array<string | undefined> = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let lastAuth: string | undefined;
  const extra: string[] = [];
  const make = () => {
    const server = new McpServer({ name: who, version: "1.0.0" });
    registerTools(server, who, log, () => lastAuth);
    server.registerResource("readme", "docs://readme", { mimeType: "text/plain", description: "The readme" }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: `${who} readme` }],
    }));
    for (const name of extra) server.registerTool(name, { description: "added later" }, async () => ({ content: [{ type: "text", text: name }] }));
    return server;
  };
  const http: Server = createServer(async (req, res) => {
    lastAuth = req.headers.authorization;
    authorizations.push(lastAuth);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const sid = req.headers["mcp-session-id"] as string | undefined;
    let entry = sid ? sessions.get(sid) : undefined;
    if (!entry) {
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        res.writeHead(sid ? 404 : 400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no session" }, id: null }));
        return;
      }
      await opts.beforeInitialize?.();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { sessions.set(id, entry!); },
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      entry = { transport, server: make() };
      await entry.server.connect(transport);
    }
    await entry.transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    authorizations,
    addTool(name) {
      extra.push(name);
      for (const { server } of sessions.values()) server.registerTool(name, { description: "added later" }, async () => ({ content: [{ type: "text", text: name }] }));
    },
    async close() {
      for (const { server } of sessions.values()) await server.close().catch(() => {});
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}
