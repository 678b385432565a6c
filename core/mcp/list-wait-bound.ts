// How long a request waits for one server's list, apart from core/mcp/list-wait.ts so the upstream (which that
// module imports) can read it too: a stale list or the names a server last listed are trusted only that long.

/** The longest a request waits for one server's list: well under an MCP client's own request timeout (60 s in the SDKs). */
export const LIST_WAIT_MS = 10_000;
/** LIST_WAIT_MS, as waits read it: a test seam (tests of a list slower than the wait need not take 10 s). */
export const listWaitBound = { ms: LIST_WAIT_MS };

/** A server's list wait: its timeout_ms, never more than the bound. */
export function listWaitMs(timeoutMs: number): number {
  return Math.min(timeoutMs, listWaitBound.ms);
}
