// The baseline the gateway is measured against: the least a Node proxy can do — read and parse the JSON body,
// forward it with undici (keep-alive pool), pipe the upstream response back. No auth, routing, metrics or ids.
// Run as a child process: prints `READY {"port":N}` on stdout.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { Pool } from "undici";
import { UPSTREAM_KEY } from "./upstream-key.ts";

export function createBareProxy(upstreamOrigin: string, connections = 128): { server: Server; close(): Promise<void> } {
  const pool = new Pool(upstreamOrigin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"message":"invalid JSON"}}');
        return;
      }
      try {
        const up = await pool.request({
          path: "/v1/chat/completions",
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${UPSTREAM_KEY}` },
          body: JSON.stringify(body),
        });
        const type = up.headers["content-type"];
        res.writeHead(up.statusCode, type ? { "content-type": type } : {});
        pipeline(up.body, res, () => {});
      } catch (err) {
        if (res.headersSent) return void res.destroy();
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  return { server, close: async () => { server.close(); await pool.close(); } };
}

async function main() {
  // --connections: upstream connections per origin (the slow-streams run needs one per open stream).
  const { values } = parseArgs({ options: { upstream: { type: "string" }, connections: { type: "string", default: "128" } } });
  if (!values.upstream) throw new Error("--upstream http://127.0.0.1:PORT is required");
  const { server } = createBareProxy(values.upstream, Number(values.connections));
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`READY ${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) void main();
