// A loopback HTTPS server with the test certificate (test/fixtures/tls), recording what it was asked, for the
// client-URL fetch tests. Never listens beyond loopback.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";

const dir = join(import.meta.dirname, "..", "fixtures", "tls");
export const TEST_CERT = readFileSync(join(dir, "cert.pem"), "utf8");
const TEST_KEY = readFileSync(join(dir, "key.pem"), "utf8");

export interface HttpsLoopback {
  port: number;
  /** Requests seen: method, path and Host header. */
  requests: { method: string; path: string; host?: string }[];
  /** Connections accepted (also those that never sent a request). */
  connections: number;
  close(): Promise<void>;
}

export async function startHttpsLoopback(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  opts: { host?: "127.0.0.1" | "127.0.0.2" | "::1"; port?: number } = {},
): Promise<HttpsLoopback> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ key: TEST_KEY, cert: TEST_CERT }, (req, res) => {
    out.requests.push({ method: req.method!, path: req.url!, host: req.headers.host });
    handler(req, res);
  });
  server.on("connection", (s: Socket) => {
    out.connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
  });
  const out: HttpsLoopback = {
    port: (server.address() as AddressInfo).port,
    requests: [],
    connections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return out;
}

/** The smallest valid PNG, a plausible image seed. */
export const PNG_1x1 = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "base64");
