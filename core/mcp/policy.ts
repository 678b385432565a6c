// Which MCP servers and tools a project may use: `projects.<id>.mcp.allow_servers` (server names and globs) and
// `allow_tools` (namespaced names `server__tool` and globs), read like allow_models. Omitted: everything.
import { compileAllowlist, type Matcher } from "../config/glob.ts";
import type { ProjectConfig } from "../generated/types/gateway.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { enabledServers, qualify } from "./spec.ts";

interface Policy { servers: Matcher; tools: Matcher }

const policies = new WeakMap<ProjectConfig, Policy>();

function policyOf(project: ProjectConfig): Policy {
  let p = policies.get(project);
  if (!p) policies.set(project, (p = { servers: compileAllowlist(project.mcp?.allow_servers), tools: compileAllowlist(project.mcp?.allow_tools) }));
  return p;
}

/** The enabled servers this project may use, in config order. */
export function visibleServers(config: RuntimeConfig, projectId: string): string[] {
  const project = config.projects.get(projectId)?.config;
  if (!project) return [];
  const p = policyOf(project);
  return enabledServers(config).filter((s) => p.servers(s));
}

export function serverAllowed(config: RuntimeConfig, projectId: string, server: string): boolean {
  return visibleServers(config, projectId).includes(server);
}

export function toolAllowed(config: RuntimeConfig, projectId: string, server: string, tool: string): boolean {
  const project = config.projects.get(projectId)?.config;
  return !!project && serverAllowed(config, projectId, server) && policyOf(project).tools(qualify(server, tool));
}
