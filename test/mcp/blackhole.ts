// A TCP endpoint that accepts every connection and never writes a byte: an MCP server that is frozen (a stopped
// process, a wedged load balancer), as the gateway meets it.
import { createServer, type Server, type Socket } from "node:net";

/**
 * Counts the connections it was offered and the initialize requests sent on them (the connection attempts: one
 * attempt may open more than one connection, its notifications/cancelled after the initialize timed out going on
 * another).
 */
export interface Blackhole { url: string; connections: number; initializes: number; connected(): Promise<void>; close(): Promise<void> }

export async function startBlackhole(): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let waiters: Array<() => void> = [];
  const hole: Blackhole = {
    url: "",
    connections: 0,
    initializes: 0,
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
    let head = ""; // the first request's first bytes: enough for its JSON-RPC method
    s.on("data", (chunk: Buffer) => {
      if (head.length > 8192) return;
      head += chunk.toString("latin1");
      if (head.includes('"method":"initialize"')) {
        hole.initializes++;
        head = head.padEnd(8193); // counted once: the connection's later bytes are not looked at
      }
    });
    s.on("close", () => sockets.delete(s));
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hole.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  return hole;
}
