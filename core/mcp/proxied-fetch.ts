// The fetch a configured MCP server (mcp_servers.<name>.url) is reached with when the egress proxy covers its URL:
// undici's ProxyAgent (one CONNECT tunnel per connection, kept alive), its failures naming the proxy (masked).
// A client-sent server_url goes through core/mcp/client-url.ts instead (checked, then tunnelled to the checked address).
import { ProxyAgent, fetch as undiciFetch } from "undici";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ProxyRoute } from "../net/egress-proxy.ts";

export interface ProxiedFetch {
  fetch: FetchLike;
  close(): Promise<void>;
}

/** `timeoutMs`: the server's timeout_ms, which bounds the proxy's TCP connect and its answer to CONNECT too. */
export function proxiedFetch(route: ProxyRoute, timeoutMs: number): ProxiedFetch {
  const agent = new ProxyAgent({ uri: route.url, proxyTls: { timeout: timeoutMs }, headersTimeout: 0, bodyTimeout: 0 });
  const fetch: FetchLike = async (url, init) => {
    try {
      return (await undiciFetch(url as never, { ...(init as object), dispatcher: agent } as never)) as unknown as Response;
    } catch (err) {
      if ((err as Error)?.name === "AbortError") throw err;
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error)?.message ?? String(err);
      throw new Error(`through the egress proxy ${route.shown}: ${cause}`, { cause: err });
    }
  };
  return { fetch, close: () => agent.close().catch(() => {}) };
}
