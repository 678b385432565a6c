// CONNECT tunnels through the egress proxy for the callers undici's ProxyAgent cannot serve (providers/egress-pool.ts
// serves provider calls):
// - the client-URL guard (core/net/url-fetch.ts, core/mcp/client-url.ts), which must reach the address it checked,
//   not whatever the proxy's DNS answers: its tunnel is to that IP (CONNECT 93.184.216.34:443), while TLS and the
//   Host header keep the URL's name. ProxyAgent always tunnels to the URL's host name.
// - the OTLP exporter, which speaks node:http and takes an http.Agent, not an undici dispatcher.
// undici still does the CONNECT (Client.connect) and the TLS (buildConnector); only the choice of target is here.
import { Agent as HttpAgent, type AgentOptions } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { isIP, type Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import type { Duplex } from "node:stream";
import { Client, buildConnector } from "undici";
import type { ProxyRoute } from "./egress-proxy.ts";

/** A tunnel the proxy did not open: unreachable, refused (its HTTP status), or silent past the timeout. */
export class ProxyTunnelError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = "ProxyTunnelError";
  }
}

/** host:port as CONNECT names it (IPv6 in brackets). */
export function tunnelTarget(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return `${isIP(bare) === 6 ? `[${bare}]` : bare}:${port}`;
}

/** A CONNECT tunnel through `route` to `target` (host:port): the raw socket, for TLS or plain HTTP on top. */
export async function openTunnel(route: ProxyRoute, target: string, timeoutMs: number, signal?: AbortSignal): Promise<Duplex> {
  const u = new URL(route.url);
  const headers: Record<string, string> = { host: target };
  if (u.username || u.password) {
    headers["proxy-authorization"] = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64")}`;
  }
  // One client per tunnel: the connection becomes the tunnel, and the client has nothing left to do.
  const client = new Client(`${u.protocol}//${u.host}`, { connect: { timeout: timeoutMs }, headersTimeout: timeoutMs });
  try {
    const { statusCode, socket } = await client.connect({ path: target, headers, signal });
    if (statusCode !== 200) {
      socket.on("error", () => {}).destroy();
      const why = statusCode === 407 ? ": Proxy Authentication Required, check the user and password of its URL" : "";
      throw new ProxyTunnelError(`the egress proxy ${route.shown} refused the tunnel to ${target} (HTTP ${statusCode}${why})`, statusCode);
    }
    return socket;
  } catch (err) {
    if (err instanceof ProxyTunnelError || signal?.aborted) throw err;
    const e = err as { code?: string; message?: string };
    const what = e.code === "UND_ERR_HEADERS_TIMEOUT" ? `did not answer CONNECT within ${timeoutMs} ms` : `could not be reached (${e.message ?? String(err)})`;
    throw new ProxyTunnelError(`the egress proxy ${route.shown} ${what}`);
  } finally {
    client.close().catch(() => {});
  }
}

export interface TunnelOptions {
  timeoutMs: number;
  /** The address to tunnel to instead of the URL's host (the client-URL guard's checked one). */
  address?: string;
  /** TLS settings for the connection to the URL's host inside the tunnel (tests: `ca`). */
  tls?: buildConnector.BuildOptions;
}

/** An undici `connect` option that reaches every origin through a tunnel (to `address` when given). */
export function tunnelConnector(route: ProxyRoute, o: TunnelOptions): buildConnector.connector {
  const secure = buildConnector({ timeout: o.timeoutMs, ...o.tls });
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === "https:" ? 443 : 80);
    openTunnel(route, tunnelTarget(o.address ?? opts.hostname, port), o.timeoutMs).then(
      (socket) => {
        if (opts.protocol !== "https:") return callback(null, socket as Socket);
        // TLS to the URL's name inside the tunnel: its certificate is checked against that name, never the address.
        secure({ ...opts, httpSocket: socket as Socket }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
}

/**
 * A node:http(s) Agent whose connections are tunnels through `route` (by the URL's host name), for clients built on
 * node:http (the OTLP exporter). Keep-alive as usual: each kept socket is an open tunnel.
 */
export function tunnelAgent(route: ProxyRoute, protocol: "http:" | "https:", timeoutMs: number, options: AgentOptions = { keepAlive: true }): HttpAgent {
  const connectThrough = (opts: { host?: string | null; port?: number | string | null; servername?: string } & ConnectionOptions, done: (err: Error | null, socket?: Duplex) => void) => {
    const host = opts.host ?? "localhost";
    const port = Number(opts.port) || (protocol === "https:" ? 443 : 80);
    openTunnel(route, tunnelTarget(host, port), timeoutMs).then(
      (socket) => done(null, protocol === "https:" ? tlsConnect({ ...opts, socket, servername: isIP(host) ? undefined : opts.servername || host }) : socket),
      (err: Error) => done(err),
    );
    return undefined; // node's Agent takes the socket from the callback
  };
  const agent = protocol === "https:" ? new HttpsAgent(options) : new HttpAgent(options);
  (agent as unknown as { createConnection: typeof connectThrough }).createConnection = connectThrough;
  return agent;
}
