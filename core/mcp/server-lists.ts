// What every server a session's project may see lists (tools, prompts, resources), gathered for one client request.
// A list is many servers' answer, so no one server may hold it: each is waited for at most its timeout_ms and never
// more than LIST_WAIT_MS (a connect still under way goes on for the next list; concurrent lists share it), a server
// whose circuit is open is left out at once, and a server that fails or is too slow is left out. Its breaker
// (`mcp:<server>`, as its tool calls) hears each fetch's outcome once, when the fetch itself ends (a connection
// attempt shared by lists of every kind counted once): a list that gave up waiting counts nothing, so many lists
// sharing a slow server's one connect are not many failures, and its success is heard. A frozen server's fetch ends
// on its own timeout_ms, a failure: it pauses itself, not every client's lists.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { GatewayContext } from "../pipeline/context.ts";
import { settleWithin } from "../deadline.ts";
import { healthOf } from "../health/index.ts";
import { mcpOf } from "./registry.ts";
import { visibleServers } from "./policy.ts";
import { ConnectFailedError, NotConnectedError, type Upstream } from "./upstream.ts";

/** The longest a list waits for one server: well under an MCP client's own request timeout (60 s in the SDKs). */
export const LIST_WAIT_MS = 10_000;

class ListTimeout extends Error {}

/** A JSON-RPC error the server answered with: it is up (its list failed), as a tool call's error answer says. */
function answered(err: unknown): boolean {
  return err instanceof McpError && err.code !== ErrorCode.RequestTimeout && err.code !== ErrorCode.ConnectionClosed;
}

/** The fetches (cached list promises) and failed connection attempts whose outcome a breaker has been told. */
const counted = new WeakSet<object>();

/** Tell `record` how `fetch` ended, when it ends, once however many lists wait on it. */
function countOnce(fetch: Promise<unknown>, record: (success: boolean) => void): void {
  if (counted.has(fetch)) return;
  counted.add(fetch);
  fetch.then(() => record(true), (err) => {
    if (err instanceof ConnectFailedError) {
      // One attempt, failing the lists of every kind that waited on it: one failure.
      if (counted.has(err)) return;
      counted.add(err);
      record(false);
    } else if (!(err instanceof NotConnectedError)) {
      record(answered(err));
    }
    // Any other NotConnectedError tried nothing (the upstream closed, or waiting out a failed attempt's backoff).
  });
}

export async function gatherLists<T>(ctx: GatewayContext, fetch: (u: Upstream) => Promise<T[]>): Promise<Array<{ server: string; items: T[] }>> {
  const registry = mcpOf(ctx.gateway);
  const health = healthOf(ctx.gateway);
  const projectId = ctx.auth!.projectId;
  return Promise.all(visibleServers(ctx.config, projectId).map(async (server) => {
    const u = registry.upstream(ctx.config, server, projectId);
    if (!u) return { server, items: [] as T[] };
    const breaker = `mcp:${server}`;
    /** This list, as the breaker knows it: only the list that took a half-open probe's slot frees it (below). */
    const probe = {};
    if (!health.allow(breaker, server, undefined, probe)) {
      ctx.gateway.log.debug("mcp server left out of a list: circuit open", { requestId: ctx.requestId, server });
      return { server, items: [] as T[] };
    }
    const wait = Math.min(u.spec.timeoutMs, LIST_WAIT_MS);
    const fetching = fetch(u);
    countOnce(fetching, (success) => health.record(breaker, server, success));
    try {
      const items = await settleWithin(fetching, wait, () => {
        throw new ListTimeout(`MCP server "${server}" did not list within ${wait} ms`);
      });
      return { server, items };
    } catch (err) {
      ctx.gateway.log.warn("mcp server left out of a list", { requestId: ctx.requestId, server, error: String((err as Error)?.message ?? err) });
      return { server, items: [] as T[] };
    } finally {
      // A half-open probe this list took and whose outcome is not (or was already) counted: the slot is free again
      // (a later request probes; one on this same fetch shares it). Once the outcome is told, this frees nothing.
      health.release(breaker, server, undefined, probe);
    }
  }));
}
