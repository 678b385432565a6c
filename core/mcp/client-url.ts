// An MCP server URL a client sent (the Responses API's `mcp` tool, server_url): checked like every client URL
// (core/net: https only unless server.url_fetch.allow_hosts names the host, every resolved address public) and then
// reached only at the checked address — the connection is pinned, so DNS cannot change between check and connect —
// and only at that origin, with redirects refused. A refusal is a 400 naming the client's field. Behind an egress
// proxy the checks are the same and the tunnel goes to the checked address, not the name (core/net/proxy-tunnel.ts).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { GatewayError } from "../errors.ts";
import { internalRange } from "../net/address.ts";
import { hostAllowed, type UrlFetchPolicy } from "../net/url-fetch.ts";
import { proxyFor } from "../net/egress-proxy.ts";
import { tunnelConnector } from "../net/proxy-tunnel.ts";

export interface CheckedUrl {
  url: URL;
  fetch: FetchLike;
  close(): Promise<void>;
}

export async function checkClientMcpUrl(raw: string, policy: UrlFetchPolicy, field: string, signal?: AbortSignal): Promise<CheckedUrl> {
  const refuse = (reason: string, message: string) => new GatewayError(400, "INVALID_REQUEST", `${field} ${message}`, { details: { field, reason } });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("invalid_url", "is not a valid URL");
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const allowed = hostAllowed(host, policy.allowHosts);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && allowed)) throw refuse("not_https", "must be an https URL");
  if (url.username || url.password) throw refuse("credentials", "must not carry credentials (send them in headers or authorization)");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      const timeout = AbortSignal.timeout(policy.timeoutMs);
      addresses = await Promise.race([
        lookup(host, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => {
          const stop = () => reject(new Error("timeout"));
          timeout.addEventListener("abort", stop, { once: true });
          signal?.addEventListener("abort", stop, { once: true });
        }),
      ]);
    } catch {
      throw refuse("unresolvable", `host ${host} does not resolve`);
    }
    if (!addresses.length) throw refuse("unresolvable", `host ${host} does not resolve`);
  }
  if (!allowed) {
    for (const { address } of addresses) {
      const range = internalRange(address);
      if (range) throw refuse("internal_address", `resolves to a ${range} address ${address}; the gateway only reaches public addresses`);
    }
  }
  const to = addresses[0]!;
  const pinned = (_h: string, opts: { all?: boolean } | undefined, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: to.address, family: to.family }]);
    else cb(null, to.address, to.family);
  };
  const route = proxyFor(policy.egress, url);
  const connect = route ? tunnelConnector(route, { timeoutMs: policy.timeoutMs, address: to.address }) : { lookup: pinned as never, timeout: policy.timeoutMs };
  const agent = new Agent({ connect, headersTimeout: 0, bodyTimeout: 0 });
  const origin = url.origin;
  const guarded: FetchLike = async (target, init) => {
    const u = new URL(String(target));
    if (u.origin !== origin) throw new Error(`${field}: the MCP server sent the gateway to another origin (${u.origin}); refused`);
    return undiciFetch(u, { ...(init as object), redirect: "manual", dispatcher: agent } as never) as unknown as Response;
  };
  return { url, fetch: guarded, close: () => agent.close().catch(() => {}) };
}
