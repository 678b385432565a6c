// What every server a session's project may see lists (tools, prompts, resources), gathered for one client request.
// A list is many servers' answer, so no one server may hold it: each is waited for as core/mcp/list-wait.ts says (at
// most its timeout_ms, never more than 10 s, its outcome counted once by its breaker), a server whose circuit is open
// is left out at once, and a server that fails or is too slow is left out: it pauses itself, not every client's lists.
import type { GatewayContext } from "../pipeline/context.ts";
import { mcpOf } from "./registry.ts";
import { visibleServers } from "./policy.ts";
import { CircuitOpenError, serverList } from "./list-wait.ts";
import type { Upstream } from "./upstream.ts";

export async function gatherLists<T>(ctx: GatewayContext, fetch: (u: Upstream) => Promise<T[]>): Promise<Array<{ server: string; items: T[] }>> {
  const registry = mcpOf(ctx.gateway);
  const projectId = ctx.auth!.projectId;
  return Promise.all(visibleServers(ctx.config, projectId).map(async (server) => {
    const u = registry.upstream(ctx.config, server, projectId);
    if (!u) return { server, items: [] as T[] };
    try {
      return { server, items: await serverList(ctx.gateway, server, u, fetch) };
    } catch (err) {
      if (err instanceof CircuitOpenError) ctx.gateway.log.debug("mcp server left out of a list: circuit open", { requestId: ctx.requestId, server });
      else ctx.gateway.log.warn("mcp server left out of a list", { requestId: ctx.requestId, server, error: String((err as Error)?.message ?? err) });
      return { server, items: [] as T[] };
    }
  }));
}
