// A config reload applies to MCP servers at once, not at the next MCP request: a removed local server's process is
// stopped (it held the old env and credentials), an added one is started, an unchanged one keeps its process; open
// sessions hear list_changed for the servers the reload changed, and for nothing else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { mcpClient, stdioServerConfig, textOf } from "./mcp/gateway.ts";
import { sleep } from "./helpers/until.ts";

const KEY = testKey("mcpreload");
let gw: TestGateway;
let config: Record<string, any>;

/** The stdio test server with a marker argument (which it ignores) that tells its process apart. */
function marked(marker: string): Record<string, unknown> {
  const base = stdioServerConfig() as { args: string[] };
  return { ...base, args: [...base.args, `mark=${marker}-${process.pid}`] };
}

/** The pids of this process's children started with `marker`. */
function processesOf(marker: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" });
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter((f) => Number(f[1]) === process.pid && f.includes(`mark=${marker}-${process.pid}`)).map((f) => Number(f[0]));
}

beforeAll(async () => {
  config = {
    store: { kind: "sqlite", path: "ledger.db" },
    mcp_servers: { keep: marked("keep"), gone: marked("gone") },
    projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
  };
  gw = await startTestGateway(config);
}, 30_000);

afterAll(async () => {
  await gw?.close();
});

async function reload(next: Record<string, any>): Promise<void> {
  writeFileSync(gw.configFile, YAML.stringify(next));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}

describe("MCP servers on a config reload", () => {
  it("stops a removed local server and starts an added one at once; sessions hear list_changed only for those", async () => {
    await expect.poll(() => processesOf("keep").length + processesOf("gone").length, { timeout: 20_000 }).toBe(2);
    const keepPid = processesOf("keep")[0];
    const { client } = await mcpClient(`${gw.url}/api/mcp`, KEY);
    try {
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("gone__echo");

      // A reload that changes no MCP server: no list_changed, before or after the next MCP request.
      await reload({ ...config, projects: { ...config.projects, other: { keys: [keyEntry("other-key", testKey("mcpreload-other"))] } } });
      expect(textOf(await client.callTool({ name: "keep__echo", arguments: { text: "hi" } }))).toBe("files: hi");
      await sleep(300);
      expect(changed).toBe(0);

      // One removed, one added, with no MCP request after the reload.
      await reload({ ...config, mcp_servers: { keep: marked("keep"), added: marked("added") } });
      await expect.poll(() => processesOf("gone").length, { timeout: 10_000 }).toBe(0);
      await expect.poll(() => processesOf("added").length, { timeout: 20_000 }).toBe(1);
      expect(processesOf("keep")).toEqual([keepPid]);
      await expect.poll(() => changed, { timeout: 5_000 }).toBe(2); // gone, added
      await sleep(300);
      expect(changed).toBe(2);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("added__echo");
      expect(names).not.toContain("gone__echo");
    } finally {
      await client.close();
    }
  }, 60_000);
});
