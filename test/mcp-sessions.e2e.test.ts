// The MCP endpoint's session table (core/endpoints/mcp.ts): mcp.max_sessions holds however sessions end. A session
// ended by DELETE used to be put back in the table by the DELETE's own request; from then on every eviction picked
// it, closed it again (a no-op) and left it there, so no session was ever evicted and memory grew per initialize.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient } from "./mcp/gateway.ts";

const KEY = testKey("mcpsessions");
const MAX = 3;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "ledger.db" },
    mcp: { max_sessions: MAX },
    projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
});

/** A tools/list on session `sid`, as a client sends it: the status and the JSON-RPC error message, if any. */
async function listOn(sid: string, on: TestGateway = gw): Promise<{ status: number; message?: string }> {
  const res = await fetch(`${on.url}/api/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const text = await res.text();
  return { status: res.status, message: res.status === 200 ? undefined : JSON.parse(text).error?.message };
}

async function openSession(): Promise<string> {
  const { transport } = await mcpClient(`${gw.url}/api/mcp`, KEY);
  return transport.sessionId!;
}

describe("MCP sessions: mcp.max_sessions", () => {
  it("a session ended by DELETE is gone from the gateway, and later sessions are still evicted oldest first", async () => {
    const { transport } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    const ended = transport.sessionId!;
    await transport.terminateSession();
    // The gateway's own answer: the session is not in its table (not the MCP library's, from a closed session kept there).
    expect(await listOn(ended)).toEqual({ status: 404, message: "Session not found (it ended or expired); start a new one with initialize" });

    const opened: string[] = [];
    for (let i = 0; i < MAX + 2; i++) opened.push(await openSession());
    const statuses = await Promise.all(opened.map(async (sid) => (await listOn(sid)).status));
    expect(statuses).toEqual([404, 404, 200, 200, 200]);
  }, 30_000);
});

describe("MCP sessions: mcp.session_idle_ms", () => {
  it("a session idle past session_idle_ms is over when next used, not at the next sweep (every 30 s)", async () => {
    const idle = await startTestGateway({ store: { kind: "sqlite", path: "ledger.db" }, mcp: { session_idle_ms: 1000 }, projects: { acme: { keys: [keyEntry("acme-key", KEY)] } } });
    try {
      const { transport } = await mcpClient(`${idle.url}/api/mcp`, KEY);
      const sid = transport.sessionId!;
      expect((await listOn(sid, idle)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 600));
      expect((await listOn(sid, idle)).status).toBe(200); // in use: kept
      await new Promise((r) => setTimeout(r, 1300));
      expect(await listOn(sid, idle)).toEqual({ status: 404, message: "Session not found (it ended or expired); start a new one with initialize" });
    } finally {
      await idle.close();
    }
  }, 30_000);
});
