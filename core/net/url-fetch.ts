// The one way the gateway downloads a URL a client sent (image seeds, images inlined for providers that need
// bytes): https only, every address the host resolves to checked against internal ranges (core/net/address.ts),
// the connection pinned to the checked address (no DNS rebinding between check and connect), redirects followed
// by hand and checked the same way, a size cap and a total timeout. A refusal is a 400 naming the client's field.
// Hosts in server.url_fetch.allow_hosts skip the address check and may use plain http.
// Behind an egress proxy (server.egress_proxy, HTTPS_PROXY) the same checks run first, on the gateway's own DNS
// answers, and the tunnel goes to the checked address (CONNECT 93.184.216.34:443), never to the name: the proxy's
// DNS cannot steer the download elsewhere (core/net/proxy-tunnel.ts).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Client } from "undici";
import { GatewayError, type ErrorCode } from "../errors.ts";
import { internalRange } from "./address.ts";
import { proxyFor, type EgressProxy, type ProxyRoute } from "./egress-proxy.ts";
import { ProxyTunnelError, tunnelConnector } from "./proxy-tunnel.ts";

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** server.url_fetch as the runtime config holds it. */
export interface UrlFetchPolicy {
  allowHosts: string[];
  maxBytes: number;
  timeoutMs: number;
  /**
   * Bytes the process's client-URL downloads may hold at once, across requests (core/net/download-pool.ts);
   * unset: DEFAULT_MAX_BYTES_IN_FLIGHT.
   */
  maxBytesInFlight?: number;
  /** The egress proxy downloads go through (after the checks, to the checked address); none: direct. */
  egress?: EgressProxy;
}

/** server.url_fetch's defaults (core/config/resolve.ts), for a caller handed no policy. */
export const DEFAULT_URL_FETCH: UrlFetchPolicy = { allowHosts: [], maxBytes: 20 * 1024 * 1024, timeoutMs: 15_000 };

export interface UrlFetchOptions extends UrlFetchPolicy {
  /** Tests only: answers DNS instead of the system resolver. */
  resolver?: Resolver;
  /** Tests only: certificates trusted instead of the system roots. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Redirects followed before giving up (default 3). */
  maxRedirects?: number;
}

export interface FetchTarget {
  /** The client's field, as named in the error (`image_url`, `messages[0].content[1].image_url.url`). */
  field: string;
  signal?: AbortSignal;
  /** The endpoint's code for a bad field (the spec has BAD_REQUEST for media endpoints); INVALID_REQUEST else. */
  code?: ErrorCode;
  accept?: string;
  /**
   * Called with each chunk's size as it arrives, to count it against a bound wider than this download (a request's
   * total, the process's bytes in flight): a refusal it returns stops the download at once and is what is thrown.
   */
  charge?: (bytes: number) => GatewayError | undefined;
}

export interface Fetched {
  bytes: Uint8Array;
  contentType?: string;
  /** Where the bytes came from, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const systemResolver: Resolver = async (host) => lookup(host, { all: true, verbatim: true });

/** An exact host name, or a `*.suffix` glob matching any name below suffix. */
export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const h = bare(host);
  return allowHosts.some((entry) => {
    const e = bare(entry);
    return e.startsWith("*.") ? h.endsWith(e.slice(1)) && h.length > e.length - 1 : h === e;
  });
}

/** Lower case, no trailing dot, no IPv6 brackets: the form host names are compared in. */
export function bare(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, "").replace(/^\[(.*)\]$/, "$1");
}

export async function fetchClientUrl(raw: string, policy: UrlFetchOptions, target: FetchTarget): Promise<Fetched> {
  const { field } = target;
  const refuse = (reason: string, message: string, extra: Record<string, unknown> = {}) =>
    new GatewayError(400, target.code ?? "INVALID_REQUEST", `${field} ${message}`, { retryable: false, details: { field, reason, ...extra } });

  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const signal = target.signal ? AbortSignal.any([target.signal, deadline]) : deadline;
  const stopped = (err: unknown) => {
    if (target.signal?.aborted) return new GatewayError(499 as number, "CANCELLED", "The request was cancelled", { cause: err });
    if (deadline.aborted) return refuse("timeout", `took longer than ${policy.timeoutMs} ms to download`);
    return undefined;
  };
  // Only the gateway's own words about its egress proxy are said (which proxy refused the tunnel, with what status).
  const unreachable = (cause: unknown, at: string, extra: Record<string, unknown> = {}) =>
    new GatewayError(400, target.code ?? "INVALID_REQUEST", `${field} could not be downloaded${at}${cause instanceof ProxyTunnelError ? `: ${cause.message}` : ""}`, { retryable: false, cause, details: { field, reason: "unreachable", ...extra } });

  const parsed = parse(raw);
  if (!parsed) throw refuse("invalid_url", "is not a valid URL");
  let url: URL = parsed;
  const maxRedirects = policy.maxRedirects ?? 3;
  for (let hop = 0; ; hop++) {
    const host = bare(url.hostname);
    // After a redirect the message says where it led, since the client never sent that URL.
    const at = hop === 0 ? "" : ` (redirected to ${url.protocol}//${url.host})`;
    const allowed = hostAllowed(host, policy.allowHosts);
    if (url.protocol === "http:" && !allowed) {
      // Plain http is the one scheme the operator can allow, so the refusal says where.
      throw refuse("not_https", `must be an https URL${at}: plain http is downloaded only from hosts in server.url_fetch.allow_hosts`, { setting: "server.url_fetch.allow_hosts" });
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw refuse("not_https", `must be an https URL${at}`);
    if (url.username || url.password) throw refuse("credentials", `must not carry credentials${at}`);
    if (!host) throw refuse("invalid_url", `has no host${at}`);

    let addresses: { address: string; family: number }[];
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await abortable((policy.resolver ?? systemResolver)(host), signal);
      } catch (err) {
        throw stopped(err) ?? refuse("unresolvable", `host ${host} does not resolve${at}`);
      }
      if (!addresses.length) throw refuse("unresolvable", `host ${host} does not resolve${at}`);
    }
    if (!allowed) {
      // Every answer, not just the first: the connection could otherwise be steered to another one.
      for (const { address } of addresses) {
        const range = internalRange(address);
        if (range) {
          const verb = isIP(host) ? "points at" : `resolves to`;
          throw refuse("internal_address", `${verb} a ${range} address ${address}${at}; the gateway only downloads from public addresses`, { address });
        }
      }
    }

    const route = proxyFor(policy.egress, url);
    // A connection failure's text (ECONNREFUSED host:port, OpenSSL's) is kept as the cause, not told to the client:
    // it would tell an open port of an allowed host from a closed one.
    const res = await get(url, addresses[0]!, policy, target, signal, route).catch((err) => {
      throw stopped(err) ?? unreachable(err, at, route ? { proxy: route.shown } : {});
    });
    try {
      if (REDIRECTS.has(res.status)) {
        const location = first(res.headers.location);
        const next: URL | undefined = location ? parse(location, url) : undefined;
        if (!next) throw refuse("bad_redirect", `answered ${res.status} without a usable Location${at}`);
        if (hop >= maxRedirects) throw refuse("too_many_redirects", `redirects more than ${maxRedirects} times`);
        url = next;
        continue;
      }
      if (res.status < 200 || res.status >= 300) throw refuse("http_status", `could not be downloaded${at}: the server answered ${res.status}`, { status: res.status });
      const length = Number(first(res.headers["content-length"]));
      if (length > policy.maxBytes) throw refuse("too_large", `is larger than ${policy.maxBytes} bytes (${length})`, { max_bytes: policy.maxBytes });
      const bytes = await readCapped(res.body, policy.maxBytes, target.charge).catch((err) => {
        throw err instanceof GatewayError ? err : stopped(err) ?? unreachable(err, at);
      });
      if (!bytes) throw refuse("too_large", `is larger than ${policy.maxBytes} bytes`, { max_bytes: policy.maxBytes });
      return { bytes, contentType: first(res.headers["content-type"])?.split(";")[0]?.trim().toLowerCase() || undefined, url: url.href };
    } finally {
      res.close();
    }
  }
}

function parse(raw: string, base?: URL): URL | undefined {
  try {
    return new URL(raw, base);
  } catch {
    return undefined;
  }
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(): void };
  close(): void;
}

/**
 * One GET on a connection of its own whose lookup answers with the checked address (or, through the egress proxy, a
 * tunnel to that address): the TLS name and the Host header stay the URL's host, but no second DNS answer can
 * redirect the socket.
 */
async function get(url: URL, to: { address: string; family: number }, policy: UrlFetchOptions, target: FetchTarget, signal: AbortSignal, route?: ProxyRoute): Promise<Response> {
  const pinned = (_host: string, opts: { all?: boolean } | undefined, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: to.address, family: to.family }]);
    else cb(null, to.address, to.family);
  };
  const tls = policy.ca ? { ca: policy.ca } : {};
  const client = new Client(url.origin, {
    connect: route
      ? tunnelConnector(route, { timeoutMs: policy.timeoutMs, address: to.address, tls })
      : { lookup: pinned as never, ...tls, timeout: policy.timeoutMs },
    headersTimeout: policy.timeoutMs,
    bodyTimeout: policy.timeoutMs,
    pipelining: 0,
  });
  try {
    const r = await client.request({
      path: url.pathname + url.search,
      method: "GET",
      headers: { accept: target.accept ?? "*/*", "user-agent": "model-gateway" },
      signal,
    });
    return {
      status: r.statusCode,
      headers: r.headers,
      body: r.body,
      close: () => {
        // Destroying an unread undici body emits an AbortError; with no listener it would be an uncaught exception.
        r.body.on("error", () => {});
        r.body.destroy();
        client.destroy().catch(() => {});
      },
    };
  } catch (err) {
    client.destroy().catch(() => {});
    throw err;
  }
}

/**
 * The body, or undefined once it grows past max (the download is stopped there); a refusal from `charge` stops it
 * too and is thrown.
 */
async function readCapped(body: Response["body"], max: number, charge?: FetchTarget["charge"]): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return undefined;
    }
    const refused = charge?.(chunk.length);
    if (refused) {
      body.destroy();
      throw refused;
    }
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
