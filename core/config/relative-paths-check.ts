// A config read from a pipe (--config <(...), /dev/stdin) has no directory of its own, yet its relative paths are
// resolved against one: ./logs/gw.log became /dev/fd/logs/gw.log, where Node's recursive mkdir loops for ever, so the
// gateway printed "listening", never answered and ignored SIGTERM; a relative store.path passed check and failed at
// start. Every relative path setting in such a config is refused at load (check, start and reload alike), naming the
// field and asking for an absolute path.
import type { GatewayConfig } from "../generated/types/gateway.ts";
import { isAbsolute } from "node:path";
import { configWithoutDirectory } from "./config-place.ts";
import type { ConfigProblem } from "./source.ts";

type Path = (string | number)[];
type At = (path: Path, message: string, atKey?: boolean) => ConfigProblem;

/**
 * Each path setting the gateway resolves against the config file's directory, as written in `config`; `enabled` is
 * false for a provider or an MCP server ("mcp_servers.<name>") switched off by an unset variable.
 */
function pathSettings(config: GatewayConfig, enabled: (name: string) => boolean): [Path, string | undefined][] {
  const found: [Path, string | undefined][] = [
    [["store", "path"], config.store?.path],
    [["store", "spool_dir"], config.store?.spool_dir],
    [["log", "file"], config.log?.file],
    [["server", "assets_dir"], config.server?.assets_dir],
  ];
  for (const [name, pc] of Object.entries(config.providers ?? {})) {
    if (enabled(name)) found.push([["providers", name, "credentials_file"], pc.credentials_file]);
  }
  for (const [name, sc] of Object.entries(config.mcp_servers ?? {})) {
    if (sc.command && enabled(`mcp_servers.${name}`)) found.push([["mcp_servers", name, "cwd"], sc.cwd]);
  }
  // A plugin module not starting with "." or "/" is a package name, found from node_modules, not a path.
  for (const [name, p] of Object.entries(config.plugins ?? {})) {
    if (p.module.startsWith(".")) found.push([["plugins", name, "module"], p.module]);
  }
  return found;
}

/** The refusal of a relative `value` at `at` in a config read from `from` (configWithoutDirectory's words). */
function refusal(at: Path, value: string, file: string, from: string): string {
  return `${at.join(".")}: ${value} is a relative path, but the config is read from ${file} (${from}), which has no ` +
    `directory to resolve it against: write an absolute path`;
}

/** Problems for the relative `include:` entries of a config read from a pipe (checked before they are read). */
export function checkRelativeIncludes(includes: unknown, file: string, dir: string, at: At, problems: ConfigProblem[]): void {
  if (!Array.isArray(includes)) return;
  const relative = includes.map((inc, i) => [i, inc] as const).filter(([, inc]) => typeof inc === "string" && !isAbsolute(inc));
  if (!relative.length) return;
  const from = configWithoutDirectory(file, dir);
  if (!from) return;
  for (const [i, inc] of relative) problems.push(at(["include", i], refusal(["include", i], inc as string, file, from)));
}

/** Problems for the relative path settings of a config read from a pipe or a device (none for a regular file). */
export function checkRelativePaths(config: GatewayConfig, file: string, dir: string, enabled: (name: string) => boolean, at: At, problems: ConfigProblem[]): void {
  const relative = pathSettings(config, enabled).filter(([, v]) => typeof v === "string" && v !== ":memory:" && !isAbsolute(v));
  if (!relative.length) return;
  const from = configWithoutDirectory(file, dir);
  if (!from) return;
  for (const [path, value] of relative) problems.push(at(path, refusal(path, value as string, file, from)));
}
