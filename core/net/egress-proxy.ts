// The HTTP proxy the gateway's own outbound calls go through (provider upstreams, MCP servers, client-URL downloads,
// the OTLP exporter): server.egress_proxy when the config has it, else the standard variables as undici's
// EnvHttpProxyAgent reads them — https targets: https_proxy, HTTPS_PROXY, else the http proxy; http targets:
// http_proxy, HTTP_PROXY; NO_PROXY / no_proxy as core/net/no-proxy.ts says (lower case first, as undici and curl).
// Resolved once per config; a call asks proxyFor() once per origin, never per request.
import { bypassesProxy, parseNoProxy, type NoProxy } from "./no-proxy.ts";
import type { EgressProxyConfig } from "../generated/types/gateway.ts";

export type { EgressProxyConfig };

export interface ProxyRoute {
  /** The proxy as undici takes it: scheme, credentials, host and port. Never logged: a credential. */
  url: string;
  /** The same with its user and password masked (http://***@proxy:3128): what logs and errors show. */
  shown: string;
  /** Where it came from: server.egress_proxy.url, HTTPS_PROXY, http_proxy, ... */
  from: string;
}

export interface EgressProxy {
  https?: ProxyRoute;
  http?: ProxyRoute;
  noProxy: NoProxy;
  /** Where no_proxy came from (server.egress_proxy.no_proxy, NO_PROXY, no_proxy), when it has entries. */
  noProxyFrom?: string;
  /** Identity for caches of connections made through it (credentials included: never shown). */
  key: string;
}

export interface EgressProblem {
  /** The config path of the bad value, or the environment variable's name. */
  at: { path: (string | number)[] } | { env: string };
  message: string;
}

type Env = Record<string, string | undefined>;

/**
 * server.egress_proxy, or (when the config has none) the environment. A present egress_proxy decides alone: without
 * a url, every call goes direct whatever the environment says. Undefined: no proxy at all (the common case, which
 * costs nothing per request).
 */
export function resolveEgressProxy(config: EgressProxyConfig | undefined, env: Env): { proxy?: EgressProxy; problems: EgressProblem[] } {
  const problems: EgressProblem[] = [];
  let https: ProxyRoute | undefined;
  let http: ProxyRoute | undefined;
  let noProxy: NoProxy;
  let noProxyFrom: string | undefined;
  if (config) {
    if (config.url) {
      const route = proxyRoute(config.url, "server.egress_proxy.url", false);
      if (typeof route === "string") problems.push({ at: { path: ["server", "egress_proxy", "url"] }, message: `server.egress_proxy.url ${route}` });
      else https = http = route;
    }
    noProxy = parseNoProxy(config.no_proxy);
    noProxyFrom = "server.egress_proxy.no_proxy";
  } else {
    const fromEnv = (names: string[]): ProxyRoute | undefined => {
      const name = names.find((n) => env[n] !== undefined);
      const value = name ? env[name]!.trim() : "";
      if (!name || !value) return undefined;
      const route = proxyRoute(value, name, true);
      if (typeof route !== "string") return route;
      problems.push({ at: { env: name }, message: `${name} (in the environment) ${route}; fix it, or set server.egress_proxy (egress_proxy: {} ignores these variables)` });
      return undefined;
    };
    http = fromEnv(["http_proxy", "HTTP_PROXY"]);
    https = fromEnv(["https_proxy", "HTTPS_PROXY"]) ?? http;
    const name = ["no_proxy", "NO_PROXY"].find((n) => env[n] !== undefined);
    noProxy = parseNoProxy(name ? env[name] : undefined);
    noProxyFrom = name;
  }
  if (!https && !http) return { problems };
  const key = JSON.stringify([https?.url, http?.url, noProxy.text]);
  return { proxy: { https, http, noProxy, noProxyFrom: noProxy.text.length ? noProxyFrom : undefined, key }, problems };
}

/** The proxy a request to `target` goes through, or undefined for a direct connection. */
export function proxyFor(egress: EgressProxy | undefined, target: string | URL): ProxyRoute | undefined {
  if (!egress) return undefined;
  let u: URL;
  try {
    u = typeof target === "string" ? new URL(target) : target;
  } catch {
    return undefined;
  }
  const route = u.protocol === "https:" ? egress.https : u.protocol === "http:" ? egress.http : undefined;
  if (!route) return undefined;
  const port = Number(u.port) || (u.protocol === "https:" ? 443 : 80);
  return bypassesProxy(egress.noProxy, u.hostname, port) ? undefined : route;
}

/**
 * A proxy URL as logs and errors show it: scheme, host and port, any user and password masked
 * (http://***@proxy:3128). Read by hand, not by URL: a malformed value is masked as well.
 */
export function maskProxyUrl(url: string): string {
  const scheme = /^[a-z][a-z\d+.-]*:\/\//i.exec(url)?.[0] ?? "";
  const rest = url.slice(scheme.length);
  const at = rest.lastIndexOf("@"); // a password may hold / or @ unencoded: all before the last @ goes
  const host = rest.slice(at + 1).split(/[/?#]/)[0];
  return `${scheme}${at >= 0 ? "***@" : ""}${host}`;
}

/**
 * A proxy URL checked and normalized, or what is wrong with it. http:// and https:// proxies (CONNECT); a value
 * from the environment may leave out http:// (curl's reading).
 */
function proxyRoute(raw: string, from: string, schemeOptional: boolean): ProxyRoute | string {
  const text = schemeOptional && !/^[a-z][a-z\d+.-]*:\/\//i.test(raw) ? `http://${raw}` : raw;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `is not a URL (${maskProxyUrl(raw)}): give the proxy as http://host:port or https://host:port`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `is a ${u.protocol.slice(0, -1)} proxy (${maskProxyUrl(raw)}): only http:// and https:// proxies are supported`;
  if (!u.hostname) return `has no host (${maskProxyUrl(raw)})`;
  if ((u.pathname && u.pathname !== "/") || u.search || u.hash) return `has a path or query (${maskProxyUrl(raw)}): a proxy URL is scheme://[user:password@]host:port only`;
  // undici decodes both for Proxy-Authorization and throws on a % that starts no escape (`50%off`): say so here.
  for (const [part, text] of [["user name", u.username], ["password", u.password]] as const) {
    if (!decodes(text)) return `has a ${part} with a % that starts no %XX escape (${maskProxyUrl(raw)}): write a % in it as %25`;
  }
  const userinfo = u.username || u.password ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
  const url = `${u.protocol}//${userinfo}${u.host}`;
  return { url, shown: maskProxyUrl(url), from };
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** What the startup line and `check` say: each proxy (masked), where it came from, and the no_proxy list. */
export function describeEgress(egress: EgressProxy): Record<string, string> {
  const route = (r: ProxyRoute | undefined) => (r ? `${r.shown} (${r.from})` : "none: direct");
  return {
    https: route(egress.https),
    http: route(egress.http),
    no_proxy: egress.noProxy.text.length ? `${egress.noProxy.text.join(",")} (${egress.noProxyFrom})` : "none",
  };
}
