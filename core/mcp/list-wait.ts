// One server's list (tools, prompts, resources) as one request waits for it: the MCP endpoint's lists, a tool
// call's name check and the Responses mcp tool's listing alike. No request waits for it longer than the server's
// timeout_ms and never more than LIST_WAIT_MS (a connect still under way goes on for the next request; concurrent
// ones share it). Its breaker (`mcp:<server>`, as its tool calls) hears each fetch's outcome once, when the fetch
// itself ends (a connection attempt shared by lists of every kind, and by tool calls, counted once): a request that
// gave up waiting counts nothing, so many requests sharing a slow server's one connect are not many failures, and
// its success is heard. A frozen server's fetch ends on its own timeout_ms, a failure: it pauses itself. A stale
// list served at once stands for the refresh behind it: that refresh's outcome is the one counted. A request that
// gives up tells the upstream, which tells the sessions when that list lands late (core/mcp/upstream.ts gaveUpOn).
import type { GatewayHandle } from "../contracts/gateway.ts";
import { settleWithin } from "../deadline.ts";
import { healthOf } from "../health/index.ts";
import { ConnectFailedError, fetchBehind, NotConnectedError, type Upstream } from "./upstream.ts";
import { listWaitMs } from "./list-wait-bound.ts";

export { LIST_WAIT_MS, listWaitBound } from "./list-wait-bound.ts";

/** The server's circuit is open: it was not asked. */
export class CircuitOpenError extends Error {
  constructor(server: string, readonly retryAfterMs: number) {
    super(`MCP server "${server}" is failing; calls are paused for a while (circuit open)`);
  }
}

/** The SDK's ErrorCode.ConnectionClosed and RequestTimeout: errors the client made up, not answers of the server's. */
const CLIENT_SIDE_CODES = new Set([-32000, -32001]);

/**
 * A JSON-RPC error the server answered with (the SDK's McpError): it is up (its list failed), as a tool call's error
 * answer says. Told by shape, not `instanceof`: this module is loaded at start by every gateway (tool calls and the
 * Responses mcp tool import it), and the SDK with zod only with the first MCP connection (core/mcp/sdk-client.ts).
 */
function answered(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (err as Error | null)?.name === "McpError" && typeof code === "number" && !CLIENT_SIDE_CODES.has(code);
}

/** The fetches (cached list promises) and failed connection attempts whose outcome a breaker has been told. */
const counted = new WeakSet<object>();

/** Whether this failed connection attempt is yet to be counted (then it is, now): one attempt is one failure. */
export function firstCountOf(attempt: ConnectFailedError): boolean {
  if (counted.has(attempt)) return false;
  counted.add(attempt);
  return true;
}

/** Tell `record` how `fetch` ended, when it ends, once however many requests wait on it. */
function countOnce(fetch: Promise<unknown>, record: (success: boolean) => void): void {
  if (counted.has(fetch)) return;
  counted.add(fetch);
  fetch.then(() => record(true), (err) => {
    if (err instanceof ConnectFailedError) {
      // One attempt, failing the lists of every kind (and the tool calls) that waited on it: one failure.
      if (firstCountOf(err)) record(false);
    } else if (!(err instanceof NotConnectedError)) {
      record(answered(err));
    }
    // Any other NotConnectedError tried nothing (the upstream closed, or waiting out a failed attempt's backoff).
  });
}

/** The outcome of `fetching` (a list of `server`'s, or the refresh behind a stale one) told to the breaker once, when it ends. */
export function countList(gateway: GatewayHandle, server: string, fetching: Promise<unknown>): void {
  const health = healthOf(gateway);
  countOnce(fetchBehind(fetching), (success) => health.record(`mcp:${server}`, server, success));
}

/**
 * `fetching` (a list of `server`'s, from `u`), waited for as above, its outcome told to the breaker once. The caller
 * has asked the breaker already (and frees a half-open probe it took). `what`: the list, for the timeout's words.
 * `leftOut`: giving up leaves the server out of a list answer (a tool call's name check gives nobody a list).
 */
export function waitForList<T>(gateway: GatewayHandle, server: string, u: Upstream, fetching: Promise<T[]>, what?: string, leftOut = true): Promise<T[]> {
  countList(gateway, server, fetching);
  const wait = listWaitMs(u.spec.timeoutMs);
  return settleWithin(fetching, wait, () => {
    u.gaveUpOn(fetching, leftOut);
    throw new Error(`MCP server "${server}" did not list${what ? ` ${what}` : ""} within ${wait} ms`);
  });
}

/** A list of `server`'s for one request: refused at once when its circuit is open (CircuitOpenError), else waited for as above. */
export async function serverList<T>(gateway: GatewayHandle, server: string, u: Upstream, fetch: (u: Upstream) => Promise<T[]>, what?: string): Promise<T[]> {
  const health = healthOf(gateway);
  const breaker = `mcp:${server}`;
  /** This request, as the breaker knows it: only the request that took a half-open probe's slot frees it (below). */
  const probe = {};
  if (!health.allow(breaker, server, undefined, probe)) throw new CircuitOpenError(server, health.retryInMs(breaker, server));
  try {
    return await waitForList(gateway, server, u, fetch(u), what);
  } finally {
    // A half-open probe this request took and whose outcome is not (or was already) counted: the slot is free again
    // (a later request probes; one on this same fetch shares it). Once the outcome is told, this frees nothing.
    health.release(breaker, server, undefined, probe);
  }
}
