// The gateway's upstream MCP connections, one per server (and one per project that brings credentials of its
// own), kept across config reloads while a server's settings stay the same, closed when a reload drops or changes
// them (once the requests holding them are done) and when the gateway closes. Tells listeners when an upstream's
// lists changed.
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { Upstream, type ListKind } from "./upstream.ts";
import { enabledServers, ownsCredentials, serverIdentity, upstreamSpec, type UpstreamSpec } from "./spec.ts";

/** `before`: on a reload, the config it replaced (a server removed, or no longer allowed, is told about too). */
export type ListChangedListener = (server: string, kind: ListKind, before?: RuntimeConfig) => void;

/** An upstream held by one request, and how it lets go (once; later calls do nothing). */
export interface HeldUpstream { upstream: Upstream; release: () => void }

export class McpRegistry {
  private readonly upstreams = new Map<string, Upstream>();
  /** How many requests hold each upstream (hold()), and those a reload replaced meanwhile: closed when the last lets go. */
  private readonly holders = new Map<Upstream, number>();
  private readonly retired = new Set<Upstream>();
  private readonly listeners = new Set<ListChangedListener>();
  /**
   * The tool names a connection a reload replaced last listed (by owner and server), and which server it reached: its
   * successor's until its own list lands, when it reaches that same server (serverIdentity).
   */
  private readonly replacedNames = new Map<string, { identity: string; names: ReadonlySet<string> }>();
  private seenConfig?: RuntimeConfig;
  private closed = false;

  constructor(private readonly gateway: GatewayHandle) {
    this.seenConfig = gateway.config;
  }

  /**
   * The connection `projectId` uses for `server`, or undefined when the server is not configured (or off). Always
   * of the config in force: a request that began before a reload never starts again a server the reload closed (one
   * that holds a connection keeps it: hold()).
   */
  upstream(_config: RuntimeConfig, server: string, projectId: string): Upstream | undefined {
    this.sync();
    const config = this.gateway.config;
    const own = ownsCredentials(config, server, projectId);
    const spec = upstreamSpec(config, server, own ? projectId : undefined);
    if (!spec || this.closed) return undefined;
    return this.get(spec, own ? projectId : "");
  }

  /**
   * upstream(), held until release(): a reload that changes or removes the server meanwhile closes this connection
   * (its process with it) only once every request holding it let go, so a request in flight (a Responses mcp loop)
   * finishes on the server it started with. Released by the request's end, so the wait is as bounded as the request.
   */
  hold(config: RuntimeConfig, server: string, projectId: string): HeldUpstream | undefined {
    const u = this.upstream(config, server, projectId);
    if (!u) return undefined;
    this.holders.set(u, (this.holders.get(u) ?? 0) + 1);
    let released = false;
    return {
      upstream: u,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.holders.get(u) ?? 1) - 1;
        if (left > 0) return void this.holders.set(u, left);
        this.holders.delete(u);
        if (this.retired.delete(u)) void u.close();
      },
    };
  }

  private get(spec: UpstreamSpec, owner: string): Upstream {
    const key = `${owner}\n${JSON.stringify(spec)}`;
    let u = this.upstreams.get(key);
    if (!u) {
      const made: Upstream = new Upstream(spec, this.gateway.log, (kind) => {
        // A replaced connection kept for its holders: sessions see the config in force, whose server it is not.
        if (this.upstreams.get(key) === made) this.emit(spec.name, kind);
      });
      const replaced = this.replacedNames.get(`${owner}\n${spec.name}`);
      // Another server (other URL, command or arguments) lists tools of its own: the old names are not sent to it.
      if (replaced?.identity === serverIdentity(spec)) made.inheritToolNames(replaced.names);
      this.replacedNames.delete(`${owner}\n${spec.name}`);
      this.upstreams.set(key, (u = made));
    }
    return u;
  }

  /** Start every local (stdio) server of the current config. */
  warm(): void {
    const config = this.gateway.config;
    for (const name of enabledServers(config)) {
      const spec = upstreamSpec(config, name);
      if (spec?.kind === "stdio") this.get(spec, "").warm();
    }
  }

  onListChanged(fn: ListChangedListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(server: string, kind: ListKind, before?: RuntimeConfig): void {
    for (const fn of this.listeners) {
      try {
        fn(server, kind, before);
      } catch (err) {
        this.gateway.log.warn("mcp list_changed listener failed", { error: String(err) });
      }
    }
  }

  /**
   * After a reload: close the connections the new config no longer describes (a removed or changed server's, its
   * process with them), and tell sessions the lists of the servers whose settings changed may differ (every server's
   * when a project's MCP allowlist changed).
   */
  sync(): void {
    const config = this.gateway.config;
    if (config === this.seenConfig) return;
    const before = this.seenConfig!;
    this.seenConfig = config;
    const now = connectionsOf(config);
    const was = connectionsOf(before);
    const wanted = new Set([...now.values()].flat());
    for (const [key, u] of this.upstreams) {
      if (wanted.has(key)) continue;
      this.upstreams.delete(key);
      // A call right after a reload that changed the server is not refused while its new connection lists slowly.
      this.replacedNames.set(`${key.slice(0, key.indexOf("\n"))}\n${u.name}`, { identity: serverIdentity(u.spec), names: u.knownToolNames });
      if (this.holders.has(u)) this.retired.add(u);
      else void u.close();
    }
    const policies = allowlistsChanged(before, config);
    for (const name of new Set([...was.keys(), ...now.keys()])) {
      if (policies || String(was.get(name)) !== String(now.get(name))) this.emit(name, "tools", before);
    }
  }

  /** A reload: apply it now (not at the next MCP request), then start the local servers it added or changed. */
  reloaded(): void {
    if (this.closed) return;
    this.sync();
    this.warm();
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.upstreams.values(), ...this.retired];
    this.upstreams.clear();
    this.retired.clear();
    await Promise.all(all.map((u) => u.close()));
  }
}

/** The connection keys (owner, then the spec) a config describes, by server. */
function connectionsOf(config: RuntimeConfig): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const name of enabledServers(config)) {
    const keys = [`\n${JSON.stringify(upstreamSpec(config, name))}`];
    for (const pid of config.projects.keys()) {
      if (ownsCredentials(config, name, pid)) keys.push(`${pid}\n${JSON.stringify(upstreamSpec(config, name, pid))}`);
    }
    out.set(name, keys);
  }
  return out;
}

/** Whether a project of both configs may use other MCP servers or tools now (a new project has no session yet). */
function allowlistsChanged(before: RuntimeConfig, after: RuntimeConfig): boolean {
  const lists = (p: { config: { mcp?: { allow_servers?: unknown; allow_tools?: unknown } } }) => JSON.stringify([p.config.mcp?.allow_servers, p.config.mcp?.allow_tools]);
  for (const [pid, p] of after.projects) {
    const was = before.projects.get(pid);
    if (was && lists(was) !== lists(p)) return true;
  }
  return false;
}

const registries = new WeakMap<GatewayHandle, McpRegistry>();

export function mcpOf(gateway: GatewayHandle): McpRegistry {
  let r = registries.get(gateway);
  if (!r) {
    const made = (r = new McpRegistry(gateway));
    registries.set(gateway, made);
    gateway.onClose(() => made.close());
  }
  return r;
}

/** At start: local servers are started with the gateway, so a broken command shows in the first log lines. */
export function startMcp(gateway: GatewayHandle): void {
  const configured = () => Object.keys(gateway.config.raw.mcp_servers ?? {}).length > 0;
  if (configured()) mcpOf(gateway).warm();
  // A reload closes what it removed or changed and starts what it added, at once, not at the next MCP request.
  gateway.onReload(() => { if (registries.has(gateway) || configured()) mcpOf(gateway).reloaded(); });
}
