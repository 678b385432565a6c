// What a gateway carries that it does not use costs every process its memory (issue 32: idle RSS is paid once per
// worker and replica). The shipped gateway, started by the bin, loads the MCP SDK (and zod under it), ioredis and pg
// only when its config or a client needs them: measured, ~9 MB of heap and of RSS per process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { postJson } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const PRELOAD = fileURLToPath(new URL("./helpers/package-loads.mjs", import.meta.url));
const LAZY = ["@modelcontextprotocol/sdk", "zod", "zod-to-json-schema", "ioredis", "pg"];

describe("the shipped gateway loads optional packages only when used", () => {
  let upstream: FakeOpenAI;
  let gw: ChildGateway;
  let logFile: string;
  /** Package names the gateway process has loaded so far. */
  const loaded = () => new Set([...readFileSync(logFile, "utf8").matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]!));

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ text: "a short answer" });
    const dir = mkdtempSync(join(tmpdir(), "mg-startup-packages-"));
    logFile = join(dir, "packages.log");
    writeFileSync(logFile, "");
    const config = shippedConfig({ openai: upstream.baseUrl, anthropic: upstream.baseUrl });
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(config));
    gw = await startChildGateway(configFile, { ...providerEnv(config), MG_PACKAGE_LOG: logFile }, ["--import", PRELOAD]);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it("serves chat, JSON and streamed, without the MCP SDK, zod, ioredis or pg", async () => {
    for (const stream of [false, true]) {
      const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream }, { authorization: `Bearer ${SHIPPED_KEY}` });
      expect(r.status).toBe(200);
    }
    const packages = loaded();
    expect(packages).toContain("h3"); // the log works: what the gateway does use is in it
    expect(packages).toContain("better-sqlite3");
    expect(LAZY.filter((p) => packages.has(p))).toEqual([]);
  });

  it("loads the MCP SDK with the first MCP session, which then works", async () => {
    const res = await fetch(`${gw.baseURL}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeTruthy();
    expect(await res.text()).toContain('"serverInfo"');
    expect(loaded()).toContain("@modelcontextprotocol/sdk");
  });
});
