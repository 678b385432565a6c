// The MCP endpoint's session table (core/endpoints/mcp.ts): mcp.max_sessions holds however sessions end. A session
// ended by DELETE used to be put back in the table by the DELETE's own request; from then on every eviction picked
// it, closed it again (a no-op) and left it there, so no session was ever evicted and memory grew per initialize.
// A full table used to close the session idle longest whoever held it, so one key opening sessions in a loop closed
// every other project's: now the key holding the most sessions loses its own idle-longest one.
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
async function listOn(sid: string, on: TestGateway = gw, key = KEY): Promise<{ status: number; message?: string }> {
  const res = await fetch(`${on.url}/api/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const text = await res.text();
  return { status: res.status, message: res.status === 200 ? undefined : JSON.parse(text).error?.message };
}

async function openSession(on: TestGateway = gw, key = KEY): Promise<string> {
  const { transport } = await mcpClient(`${on.url}/api/mcp`, key);
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

describe("MCP sessions: one key filling mcp.max_sessions", () => {
  const FLOODER = testKey("mcpflooder");
  const OTHER = testKey("mcpother");

  it("closes the flooding key's own sessions, oldest first, and never the other project's one", async () => {
    const shared = await startTestGateway({
      store: { kind: "sqlite", path: "ledger.db" },
      mcp: { max_sessions: 5 },
      projects: { flood: { keys: [keyEntry("flood-key", FLOODER)] }, other: { keys: [keyEntry("other-key", OTHER)] } },
    });
    try {
      const theirs = await openSession(shared, OTHER);
      const flooded: string[] = [];
      for (let i = 0; i < 10; i++) flooded.push(await openSession(shared, FLOODER));
      expect((await listOn(theirs, shared, OTHER)).status).toBe(200);
      const statuses = [];
      for (const sid of flooded) statuses.push((await listOn(sid, shared, FLOODER)).status);
      // The table holds 5: the other project's one and the flooder's 4 newest.
      expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 200, 200, 200, 200]);
    } finally {
      await shared.close();
    }
  }, 30_000);

  it("when every key holds one session, the one idle longest is closed", async () => {
    const keys = [0, 1, 2, 3].map((i) => testKey(`mcpone${i}`));
    const one = await startTestGateway({
      store: { kind: "sqlite", path: "ledger.db" },
      mcp: { max_sessions: 3 },
      projects: Object.fromEntries(keys.map((k, i) => [`p${i}`, { keys: [keyEntry(`k${i}`, k)] }])),
    });
    try {
      const sids = [];
      for (const k of keys.slice(0, 3)) sids.push(await openSession(one, k));
      expect((await listOn(sids[0]!, one, keys[0])).status).toBe(200); // used last: key 1's is now idle longest
      sids.push(await openSession(one, keys[3]));
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await listOn(sids[i]!, one, keys[i])).status);
      expect(statuses).toEqual([200, 404, 200, 200]);
    } finally {
      await one.close();
    }
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
