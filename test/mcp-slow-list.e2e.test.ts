// A healthy local MCP server whose tools/list takes longer than a request waits for a list (the wait is cut to
// 300 ms here through list-wait's test seam, rather than the 10 s it is): as Claude Code and Codex saw it, the first
// call after a reload that changed the server, and every first call after a minute idle, failed ("did not list its
// tools within …"), and a list that gave up on the server left its tools out for good (no list_changed when its list
// landed). The gateway now serves a list it had while one refresh runs, lets a call whose name the server last
// listed through while the fresh list comes, and tells sessions when a list they went without lands.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, textOf } from "./mcp/gateway.ts";
import { LIST_WAIT_MS, listWaitBound } from "../core/mcp/list-wait.ts";
import { listTiming } from "../core/mcp/upstream.ts";

const KEY = testKey("mcpslowlist");
const SLOW_SERVER = join(import.meta.dirname, "mcp", "slow-list-server.ts");
const TTL_MS = listTiming.ttlMs;
let gw: TestGateway;
let config: Record<string, any>;

/** The slow server, its tools/list answered after `delayMs`, its echo saying `tag`. */
function slowServer(delayMs: number, tag: string): Record<string, unknown> {
  return { command: process.execPath, args: ["--import", "tsx", SLOW_SERVER], env: { LIST_DELAY_MS: String(delayMs), TAG: tag }, timeout_ms: 60_000 };
}

async function reload(delayMs: number, tag: string): Promise<void> {
  config = { ...config, mcp_servers: { slow: slowServer(delayMs, tag) } };
  writeFileSync(gw.configFile, YAML.stringify(config));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}

const toolNames = async (client: Awaited<ReturnType<typeof mcpClient>>["client"]) => (await client.listTools()).tools.map((t) => t.name);

beforeAll(async () => {
  listWaitBound.ms = 300;
  config = {
    store: { kind: "sqlite", path: "ledger.db" },
    mcp_servers: { slow: slowServer(0, "v1") },
    projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
  };
  gw = await startTestGateway(config);
}, 30_000);

afterAll(async () => {
  listWaitBound.ms = LIST_WAIT_MS;
  listTiming.ttlMs = TTL_MS;
  await gw?.close();
});

describe("an MCP server whose tool list is slower than a request waits for it", () => {
  it("a call right after a reload that changed the server runs on the new server (the names it last listed)", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await expect.poll(() => toolNames(client), { timeout: 20_000 }).toContain("slow__echo");
      expect(textOf(await client.callTool({ name: "slow__echo", arguments: { text: "a" } }))).toBe("v1: a");
      await reload(30_000, "v2"); // its list never lands in this test
      const r = await client.callTool({ name: "slow__echo", arguments: { text: "b" } });
      expect(textOf(r)).toBe("v2: b");
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 40_000);

  it("a list that answered without the server is followed by list_changed once the server's list lands", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await reload(4_000, "v3");
      const before = await toolNames(client);
      expect(before).not.toContain("slow__echo"); // its list takes 4 s, the list waited 300 ms
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
      await expect.poll(() => changed, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(await toolNames(client)).toContain("slow__echo");
    } finally {
      await client.close();
    }
  }, 40_000);

  it("once its list is past the TTL, a call and a list are served from the list had while one refresh runs", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await expect.poll(() => toolNames(client), { timeout: 20_000 }).toContain("slow__echo"); // v3's list, had
      listTiming.ttlMs = 0; // every list is past its TTL now; a fresh one takes 4 s
      // A stale list is served only while its refresh has run no longer than a list is waited for: this one's 2 s
      // (still under the 4 s list) leave the call and the list below time to be served from it.
      listWaitBound.ms = 2_000;
      const r = await client.callTool({ name: "slow__echo", arguments: { text: "c" } });
      expect(textOf(r)).toBe("v3: c");
      expect(await toolNames(client)).toContain("slow__echo");
    } finally {
      listTiming.ttlMs = TTL_MS;
      listWaitBound.ms = 300;
      await client.close();
    }
  }, 40_000);
});
