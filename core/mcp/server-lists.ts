// What every server a session's project may see lists (tools, prompts, resources), gathered for one client request.
// A list is many servers' answer, so no one server may hold it: each is waited for at most its timeout_ms and never
// more than LIST_WAIT_MS (a connect still under way goes on for the next list; concurrent lists share it), a server
// whose circuit is open is left out at once, and a server that fails or is too slow is left out and counts against
// its breaker (`mcp:<server>`, as its tool calls do): a frozen server pauses itself, not every client's lists.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { GatewayContext } from "../pipeline/context.ts";
import { settleWithin } from "../deadline.ts";
import { healthOf } from "../health/index.ts";
import { mcpOf } from "./registry.ts";
import { visibleServers } from "./policy.ts";
import type { Upstream } from "./upstream.ts";

/** The longest a list waits for one server: well under an MCP client's own request timeout (60 s in the SDKs). */
export const LIST_WAIT_MS = 10_000;

class ListTimeout extends Error {}

/** A JSON-RPC error the server answered with: it is up (its list failed), as a tool call's error answer says. */
function answered(err: unknown): boolean {
  return err instanceof McpError && err.code !== ErrorCode.RequestTimeout && err.code !== ErrorCode.ConnectionClosed;
}

export async function gatherLists<T>(ctx: GatewayContext, fetch: (u: Upstream) => Promise<T[]>): Promise<Array<{ server: string; items: T[] }>> {
  const registry = mcpOf(ctx.gateway);
  const health = healthOf(ctx.gateway);
  const projectId = ctx.auth!.projectId;
  return Promise.all(visibleServers(ctx.config, projectId).map(async (server) => {
    const u = registry.upstream(ctx.config, server, projectId);
    if (!u) return { server, items: [] as T[] };
    const breaker = `mcp:${server}`;
    /** This list, as the breaker knows it: a half-open probe's slot is freed only by its own outcome. */
    const probe = {};
    if (!health.allow(breaker, server, undefined, probe)) {
      ctx.gateway.log.debug("mcp server left out of a list: circuit open", { requestId: ctx.requestId, server });
      return { server, items: [] as T[] };
    }
    const wait = Math.min(u.spec.timeoutMs, LIST_WAIT_MS);
    try {
      const items = await settleWithin(fetch(u), wait, () => {
        throw new ListTimeout(`MCP server "${server}" did not list within ${wait} ms`);
      });
      health.record(breaker, server, true);
      return { server, items };
    } catch (err) {
      health.record(breaker, server, answered(err));
      ctx.gateway.log.warn("mcp server left out of a list", { requestId: ctx.requestId, server, error: String((err as Error)?.message ?? err) });
      return { server, items: [] as T[] };
    }
  }));
}
