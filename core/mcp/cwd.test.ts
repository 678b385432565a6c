import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadConfig } from "../config/load.ts";
import { ConfigError, formatProblem } from "../config/source.ts";
import { write } from "../config/config.testkit.ts";
import { NotConnectedError, Upstream } from "./upstream.ts";
import { STDIO_SERVER } from "../../test/mcp/gateway.ts";

/** docs/mcp.md's local server, with `cwd` as given. */
const yaml = (cwd: string, env = "") => `
mcp_servers:
  files:
    command: ${process.execPath}
    args: ["--import", "tsx", "${STDIO_SERVER}"]${env}
    cwd: ${cwd}                          # relative to gateway.yaml
`;

async function problemsOf(file: string): Promise<string[]> {
  try {
    await loadConfig(file, { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map(formatProblem);
    throw err;
  }
  return [];
}

describe("a local MCP server's cwd", () => {
  it("check, start and reload refuse one that is not an existing directory, at the cwd: line", async () => {
    const file = write(yaml("./tools"));
    const dir = dirname(file);
    expect(await problemsOf(file)).toEqual([`${file}:6:10: MCP server "files": cwd ${join(dir, "tools")} does not exist (a relative cwd is from the config file's directory)`]);
    writeFileSync(join(dir, "tools"), "");
    expect((await problemsOf(file))[0]).toContain(`cwd ${join(dir, "tools")} is not a directory`);
    rmSync(join(dir, "tools"));
    mkdirSync(join(dir, "tools"));
    expect(await problemsOf(file)).toEqual([]);
  });

  it("a server switched off for an unset variable is not checked (it is not started)", async () => {
    expect(await problemsOf(write(yaml("./missing", `\n    env: { TOKEN: "\${UNSET_MCP_TOKEN}" }`)))).toEqual([]);
  });
});

describe("a local MCP server whose cwd has gone", () => {
  const dirs: string[] = [];
  afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

  it("fails to start naming the working directory, not the command, and says so in the log once", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "mg-mcp-cwd-"));
    dirs.push(cwd);
    rmSync(cwd, { recursive: true });
    const warnings: Array<[string, Record<string, unknown>]> = [];
    const log = { debug() {}, info() {}, error() {}, warn: (m: string, f: Record<string, unknown>) => warnings.push([m, f]) };
    const u = new Upstream({ kind: "stdio", name: "files", command: process.execPath, args: ["--import", "tsx", STDIO_SERVER], env: {}, cwd, timeoutMs: 10_000, maxTotalMs: 10_000 }, log as never, () => {});
    try {
      const err = await u.ready().then(() => undefined, (e: Error) => e);
      expect(err).toBeInstanceOf(NotConnectedError);
      expect(err!.message).toContain(`its working directory ${cwd} does not exist (mcp_servers.files.cwd;`);
      expect(warnings).toEqual([["mcp server could not connect", { server: "files", error: expect.stringContaining(`working directory ${cwd} does not exist`) }]]);
    } finally {
      await u.close();
    }
  });
});
