// A local MCP server's working directory (`cwd:`, relative to gateway.yaml's directory): resolved, and checked. A
// missing one otherwise shows only when the server is spawned, as Node's `spawn <command> ENOENT`, which blames the
// command rather than the directory.
import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "../config/source.ts";

export function resolveCwd(configDir: string, cwd: string): string {
  return isAbsolute(cwd) ? cwd : resolve(configDir, cwd);
}

/** Why `dir` cannot be a working directory ("does not exist", ...), or undefined when it is an existing directory. */
export function cwdProblem(dir: string): string | undefined {
  try {
    return statSync(dir).isDirectory() ? undefined : "is not a directory";
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "does not exist" : `cannot be used (${code ?? String(err)})`;
  }
}

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

/** A config problem at each enabled local server's `cwd:` that is not an existing directory (check, start, reload). */
export function checkMcpCwds(config: GatewayConfig, configDir: string, enabled: (server: string) => boolean, at: At, problems: ConfigProblem[]): void {
  for (const [name, sc] of Object.entries(config.mcp_servers ?? {})) {
    if (!sc.command || !sc.cwd || !enabled(name)) continue;
    const dir = resolveCwd(configDir, sc.cwd);
    const why = cwdProblem(dir);
    if (why) problems.push(at(["mcp_servers", name, "cwd"], `MCP server "${name}": cwd ${dir} ${why} (a relative cwd is from the config file's directory)`));
  }
}
