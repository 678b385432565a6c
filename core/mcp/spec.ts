// How to reach one upstream MCP server, worked out from gateway.yaml (and a project's own credentials), plus the
// names the gateway shows for what it serves: `server__tool`, `server__prompt`, `mcpgw://server/<original uri>`.
import { resolveCwd } from "./cwd.ts";
import type { McpServerConfig } from "../generated/types/gateway.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { proxyFor, type ProxyRoute } from "../net/egress-proxy.ts";

export type UpstreamSpec =
  | {
    kind: "http"; name: string; url: string; transport: "streamable_http" | "sse"; headers: Record<string, string>; timeoutMs: number; maxTotalMs: number; guarded?: boolean;
    /** The largest answer (an SSE stream's: event) read from the server (mcp.max_result_bytes; unset: 10 MiB). */
    maxAnswerBytes?: number;
    /** The egress proxy its URL is reached through (part of the spec: a reload that changes it reconnects). */
    proxy?: ProxyRoute;
  }
  | { kind: "stdio"; name: string; command: string; args: string[]; env: Record<string, string>; cwd?: string; timeoutMs: number; maxTotalMs: number };

export const SEP = "__";

/**
 * Which server a spec reaches, whatever its credentials, timeouts or limits: its URL, or its command, arguments and
 * working directory. A reload that keeps it talks to the same server (the names it last listed still hold).
 */
export function serverIdentity(spec: UpstreamSpec): string {
  return JSON.stringify(spec.kind === "http" ? [spec.kind, spec.url] : [spec.kind, spec.command, spec.args, spec.cwd ?? null]);
}

/** Servers of this config that are switched on (their `${ENV}` credentials are set). */
export function enabledServers(config: RuntimeConfig): string[] {
  return Object.keys(config.raw.mcp_servers ?? {}).filter((name) => !config.disabledProviders.has(`mcp_servers.${name}`));
}

/** Only the values that are set: a project's credential whose variable is unset is not used. */
function setValues(m: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m ?? {})) if (typeof v === "string" && v !== "") out[k] = v;
  return out;
}

const maxAnswer = (config: RuntimeConfig) => (config.raw.mcp?.max_result_bytes ? { maxAnswerBytes: config.raw.mcp.max_result_bytes } : {});

/** The spec for `name` as `projectId` reaches it: the project's own headers/env replace the gateway's. */
export function upstreamSpec(config: RuntimeConfig, name: string, projectId?: string): UpstreamSpec | undefined {
  const sc: McpServerConfig | undefined = config.raw.mcp_servers?.[name];
  if (!sc || config.disabledProviders.has(`mcp_servers.${name}`)) return undefined;
  const own = projectId ? config.projects.get(projectId)?.config.mcp?.servers?.[name] : undefined;
  const timeoutMs = sc.timeout_ms ?? 60_000;
  const maxTotalMs = Math.max(timeoutMs, sc.max_total_timeout_ms ?? 600_000);
  if (sc.url) {
    const proxy = proxyFor(config.server.egressProxy, sc.url);
    return { kind: "http", name, url: sc.url, transport: sc.transport ?? "streamable_http", headers: { ...setValues(sc.headers), ...setValues(own?.headers) }, timeoutMs, maxTotalMs, ...(proxy ? { proxy } : {}), ...maxAnswer(config) };
  }
  return {
    kind: "stdio", name, command: sc.command!, args: sc.args ?? [], env: { ...setValues(sc.env), ...setValues(own?.env) },
    cwd: sc.cwd ? resolveCwd(config.dir, sc.cwd) : undefined, timeoutMs, maxTotalMs,
  };
}

/** Whether the project brings credentials of its own for this server (it then gets a connection of its own). */
export function ownsCredentials(config: RuntimeConfig, name: string, projectId: string): boolean {
  const own = config.projects.get(projectId)?.config.mcp?.servers?.[name];
  return Object.keys(setValues(own?.headers)).length + Object.keys(setValues(own?.env)).length > 0;
}

export function qualify(server: string, name: string): string {
  return `${server}${SEP}${name}`;
}

/** `server__tool` -> [server, tool]; server names never hold `__` (the schema refuses them). */
export function unqualify(qualified: string): [string, string] | undefined {
  const at = qualified.indexOf(SEP);
  if (at <= 0 || at + SEP.length >= qualified.length) return undefined;
  return [qualified.slice(0, at), qualified.slice(at + SEP.length)];
}

const URI_PREFIX = "mcpgw://";

export function wrapUri(server: string, uri: string): string {
  return `${URI_PREFIX}${server}/${uri}`;
}

export function unwrapUri(uri: string): [string, string] | undefined {
  if (!uri.startsWith(URI_PREFIX)) return undefined;
  const rest = uri.slice(URI_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return [rest.slice(0, slash), rest.slice(slash + 1)];
}
