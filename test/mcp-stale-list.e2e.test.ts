// What the names a server last listed may still do, as a client of {base_url}/api/mcp sees it. d6de962 served a
// list past its minute while one refresh ran and let a call whose name the server last listed go on while a fresh
// list came: a frozen server (connected, answering nothing) then got every call, each waiting out its timeout_ms,
// where a call used to be refused within a list's wait; and a tool the server had just removed (list_changed) was
// still sent to it. The names are trusted only while the server shows life, and never past list_changed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import YAML from "yaml";
import { tmpdir } from "node:os";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, textOf } from "./mcp/gateway.ts";
import { LIST_WAIT_MS, listWaitBound } from "../core/mcp/list-wait.ts";
import { fetchBehind, listTiming } from "../core/mcp/upstream.ts";
import { mcpOf } from "../core/mcp/registry.ts";

const KEY = testKey("mcpstalelist");
const SERVER = join(import.meta.dirname, "mcp", "controllable-server.ts");
const TTL_MS = listTiming.ttlMs;
const scratch = mkdtempSync(join(tmpdir(), "mcp-stale-list-"));

type McpClient = Awaited<ReturnType<typeof mcpClient>>["client"];
const toolNames = async (client: McpClient) => (await client.listTools()).tools.map((t) => t.name);

/** A gateway fronting the controllable server as `ctl`, and the file where the server notes each tools/call it got. */
async function gatewayWithServer(name: string, extra: Record<string, unknown> = {}): Promise<{ gw: TestGateway; calls: () => string[] }> {
  const callLog = join(scratch, `${name}.calls`);
  const gw = await startTestGateway({
    store: { kind: "sqlite", path: "ledger.db" },
    mcp_servers: { ctl: { command: process.execPath, args: ["--import", "tsx", SERVER], env: { CALL_LOG: callLog }, ...extra } },
    projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
  });
  return { gw, calls: () => (existsSync(callLog) ? readFileSync(callLog, "utf8").split("\n").filter(Boolean) : []) };
}

const ledgerTools = async (gw: TestGateway) => (await gw.gateway.store.ledger({ project: "acme" })).map((r) => r.model);

afterEach(() => {
  listWaitBound.ms = LIST_WAIT_MS;
  listTiming.ttlMs = TTL_MS;
});

describe("a frozen MCP server whose tool list is past its TTL", () => {
  let gw: TestGateway;
  let calls: () => string[];
  beforeAll(async () => ({ gw, calls } = await gatewayWithServer("frozen", { timeout_ms: 4000 })), 30_000);
  afterAll(async () => { await gw?.close(); });

  it("refuses a call once the list's refresh has run longer than a list is waited for, and after that refresh failed, never sending it", async () => {
    listWaitBound.ms = 1000;
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await expect.poll(() => toolNames(client), { timeout: 20_000 }).toContain("ctl__echo");
      expect(textOf(await client.callTool({ name: "ctl__freeze", arguments: {} }))).toBe("freeze ran");
      listTiming.ttlMs = 0; // the list had is past its TTL: the next list serves it and starts a refresh, which never lands
      expect(await toolNames(client)).toContain("ctl__echo");
      await new Promise((r) => setTimeout(r, 1200)); // the refresh has now run longer than a list is waited for
      const refused = 'MCP server "ctl" is not available: MCP server "ctl" did not list its tools within 1000 ms';
      const first = await client.callTool({ name: "ctl__echo", arguments: {} });
      expect(first.isError).toBe(true);
      expect(textOf(first)).toBe(refused);
      // The refresh fails on its timeout_ms; the next call's list is a cold one, and the names last listed are not used.
      const upstream = mcpOf(gw.gateway).upstream(gw.gateway.config, "ctl", "acme")!;
      await fetchBehind(upstream.tools()).catch(() => {});
      const next = await client.callTool({ name: "ctl__echo", arguments: {} });
      expect(textOf(next)).toBe(refused);
      expect(calls()).toEqual(["freeze"]);
      expect(await ledgerTools(gw)).toEqual(["freeze"]);
    } finally {
      await client.close();
    }
  }, 40_000);
});

describe("names the server no longer lists", () => {
  let gw: TestGateway;
  let calls: () => string[];
  beforeAll(async () => ({ gw, calls } = await gatewayWithServer("dropped")), 30_000);
  afterAll(async () => { await gw?.close(); });

  async function unknownTool(p: Promise<unknown>): Promise<void> {
    const err = await p.then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toContain("Unknown tool");
  }

  it("a call right after list_changed removed its tool is Unknown tool, never sent, no ledger row", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await expect.poll(() => toolNames(client), { timeout: 20_000 }).toContain("ctl__danger");
      expect(textOf(await client.callTool({ name: "ctl__drop", arguments: {} }))).toBe("drop ran"); // list_changed came first
      await unknownTool(client.callTool({ name: "ctl__danger", arguments: {} }));
      expect(calls()).toEqual(["drop"]);
      expect(await ledgerTools(gw)).toEqual(["drop"]);
    } finally {
      await client.close();
    }
  }, 40_000);

  it("a reload that points the server's name at another server does not call the old server's names on it", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      await expect.poll(() => toolNames(client), { timeout: 20_000 }).toContain("ctl__freeze");
      // Another server (other args) answering any name it is sent, whose list (echo only) takes a moment.
      const other = { command: process.execPath, args: ["--import", "tsx", join(import.meta.dirname, "mcp", "slow-list-server.ts")], env: { LIST_DELAY_MS: "300", TAG: "other" } };
      const config = YAML.parse(readFileSync(gw.configFile, "utf8"));
      config.mcp_servers = { ctl: other };
      writeFileSync(gw.configFile, YAML.stringify(config));
      expect(await gw.gateway.reload()).toMatchObject({ ok: true });
      await unknownTool(client.callTool({ name: "ctl__freeze", arguments: {} }));
      expect(textOf(await client.callTool({ name: "ctl__echo", arguments: { text: "x" } }))).toBe("other: x");
    } finally {
      await client.close();
    }
  }, 40_000);
});
