// The connection pool of an upstream origin reached through the egress proxy (core/net/egress-proxy.ts): undici's
// ProxyAgent, which opens one CONNECT tunnel per connection and keeps the tunnels alive like any pool's sockets;
// its per-origin pool gets the same `connections` cap and keep-alive as a direct one. The tunnel is bounded too: the
// TCP connect to the proxy and its answer to CONNECT within the provider's timeout. A failure there names the proxy.
import type { Readable } from "node:stream";
import { Pool, ProxyAgent, type Dispatcher } from "undici";
import { GatewayError } from "../core/errors.ts";
import type { ProxyRoute } from "../core/net/egress-proxy.ts";

export interface PoolSettings {
  connections: number;
  keepAliveTimeout: number;
  /**
   * The provider's timeout_ms: the proxy must accept the connection within it, and answer CONNECT within it and the
   * second undici's coarse timers may be early by (a call waiting for its connection cannot be cut sooner).
   */
  timeoutMs: number;
}

/**
 * One origin's pool through the proxy, called as a Pool is (no `origin` in the request: the direct path is unchanged).
 * ProxyAgent writes a Host header into the headers it is handed: a driver's own object (reused) is copied first.
 */
class ProxiedPool extends ProxyAgent {
  constructor(private readonly origin: string, opts: ProxyAgent.Options) {
    super(opts);
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = opts.headers;
    const headers = h && !Array.isArray(h) && typeof h === "object" && !(Symbol.iterator in h) ? { ...h } : h;
    return super.dispatch({ ...opts, origin: this.origin, headers }, handler);
  }
}

export function proxiedPool(origin: string, route: ProxyRoute, s: PoolSettings): Dispatcher {
  return new ProxiedPool(origin, {
    uri: route.url, // its user and password become Proxy-Authorization: Basic on each CONNECT
    connections: s.connections,
    keepAliveTimeout: s.keepAliveTimeout,
    pipelining: 1,
    proxyTls: { timeout: s.timeoutMs },
    clientFactory: (url, opts) => new Pool(url, { ...opts, headersTimeout: s.timeoutMs + 1000 }), // CONNECTs in parallel
  });
}

/**
 * A transport failure of a call that went through the proxy, said as such: the proxy unreachable, refusing the tunnel
 * (407: its credentials), or the upstream behind it silent. Still a retryable 502 / 504; details.proxy is the
 * masked proxy URL.
 */
export function throughProxy(err: GatewayError, provider: string, route: ProxyRoute, origin: string, timeoutMs: number): GatewayError {
  if (err.code !== "UPSTREAM_ERROR" && err.code !== "UPSTREAM_TIMEOUT") return err;
  if (err.details?.proxy) return err; // said already
  const cause = (err.cause as { message?: string } | undefined)?.message ?? "";
  const refused = /Proxy response \((\d+)\)/.exec(cause);
  const host = new URL(origin).host;
  let message: string;
  if (refused) {
    const status = Number(refused[1]);
    const why = status === 407 ? ": Proxy Authentication Required, check the user and password of its URL" : "";
    message = `Could not reach provider ${provider}: the egress proxy ${route.shown} refused the tunnel to ${host} (HTTP ${status}${why})`;
  } else if (err.code === "UPSTREAM_TIMEOUT") {
    // The proxy left CONNECT unanswered, or the provider behind it its request: either way no answer in time.
    message = `Provider ${provider} did not respond within ${timeoutMs} ms through the egress proxy ${route.shown}`;
  } else {
    message = `Could not reach provider ${provider} through the egress proxy ${route.shown}: ${cause || err.message}`;
  }
  return new GatewayError(err.status, err.code, message, {
    retryable: err.retryable,
    retryAfter: err.retryAfter,
    headers: err.headers,
    details: { ...err.details, proxy: route.shown, ...(refused ? { proxy_status: Number(refused[1]) } : {}) },
    cause: err.cause,
  });
}

/** The error a proxied call's body broke off with, and the proxy it came through. */
const brokenThrough = new WeakMap<object, { route: ProxyRoute; origin: string }>();

/**
 * Remembers that `body` comes through the proxy, so that the error it may break off with mid-stream (the tunnel
 * dropped: "other side closed") can name the proxy as a failed connect does. The reader maps that error later
 * (providers/http.ts transportError) and looks it up only then.
 */
export function watchProxiedBody(body: Readable, route: ProxyRoute, origin: string): void {
  body.once("error", (err: unknown) => {
    if (typeof err === "object" && err !== null) brokenThrough.set(err, { route, origin });
  });
}

/** The proxy a body's error came through (see watchProxiedBody), if it did. */
export function proxyOfBreak(err: unknown): { route: ProxyRoute; origin: string } | undefined {
  return typeof err === "object" && err !== null ? brokenThrough.get(err) : undefined;
}
