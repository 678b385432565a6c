// A loopback HTTP CONNECT proxy, the kind companies put between their hosts and the internet: it opens a tunnel to
// the host:port a client names and relays bytes both ways. It records every tunnel asked for (and whether it was
// let through), can require a user and password (407 otherwise), refuse targets (403) or never answer (a proxy
// that hangs). Plain requests (absolute-form GET http://...) are refused: the gateway must tunnel.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface ConnectProxy {
  /** http://[user:pass@]127.0.0.1:port, as a client configures it. */
  url: string;
  port: number;
  /** Every CONNECT, in order: its target (host:port), the Proxy-Authorization sent, and the answer given. */
  tunnels: { target: string; auth?: string; status: number }[];
  /** Targets (host:port) answered 403. */
  refuse: Set<string>;
  /** Leave every CONNECT unanswered (a proxy that hangs). */
  hang: boolean;
  /** The proxy's own DNS for test names (img.test -> 127.0.0.1); other names go to the system resolver. */
  dns: Map<string, string>;
  close(): Promise<void>;
}

export async function startConnectProxy(opts: { user?: string; password?: string } = {}): Promise<ConnectProxy> {
  const sockets = new Set<Socket>();
  const expected = opts.user !== undefined ? `Basic ${Buffer.from(`${opts.user}:${opts.password ?? ""}`).toString("base64")}` : undefined;
  const server: Server = createServer((_req, res) => {
    res.writeHead(405, { "content-type": "text/plain" }).end("this proxy only tunnels (CONNECT)");
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on("error", () => {});
    const target = req.url ?? "";
    const auth = req.headers["proxy-authorization"];
    const record = { target, auth, status: 0 };
    proxy.tunnels.push(record);
    if (proxy.hang) return;
    const answer = (status: number, reason: string, extra = "") => {
      record.status = status;
      client.end(`HTTP/1.1 ${status} ${reason}\r\n${extra}content-length: 0\r\n\r\n`);
    };
    if (expected && auth !== expected) return answer(407, "Proxy Authentication Required", 'proxy-authenticate: Basic realm="test"\r\n');
    if (proxy.refuse.has(target)) return answer(403, "Forbidden");
    const at = target.lastIndexOf(":");
    const host = target.slice(0, at).replace(/^\[(.*)\]$/, "$1");
    const upstream = connect(Number(target.slice(at + 1)), proxy.dns.get(host) ?? host);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.once("connect", () => {
      record.status = 200;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => {
      if (!record.status) answer(502, "Bad Gateway");
      else client.destroy();
    });
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const userinfo = opts.user !== undefined ? `${encodeURIComponent(opts.user)}:${encodeURIComponent(opts.password ?? "")}@` : "";
  const proxy: ConnectProxy = {
    url: `http://${userinfo}127.0.0.1:${port}`,
    port,
    tunnels: [],
    refuse: new Set(),
    hang: false,
    dns: new Map(),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return proxy;
}
