// The gateway's upstream MCP connections, one per server (and one per project that brings credentials of its
// own), kept across config reloads while a server's settings stay the same, closed when a reload drops or changes
// them and when the gateway closes. Tells listeners when an upstream's lists changed.
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { Upstream, type ListKind } from "./upstream.ts";
import { enabledServers, ownsCredentials, upstreamSpec, type UpstreamSpec } from "./spec.ts";

export type ListChangedListener = (server: string, kind: ListKind) => void;

export class McpRegistry {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly listeners = new Set<ListChangedListener>();
  private seenConfig?: RuntimeConfig;
  private closed = false;

  constructor(private readonly gateway: GatewayHandle) {}

  /** The connection `projectId` uses for `server` in this config, or undefined when the server is not configured (or off). */
  upstream(config: RuntimeConfig, server: string, projectId: string): Upstream | undefined {
    this.sync();
    const own = ownsCredentials(config, server, projectId);
    const spec = upstreamSpec(config, server, own ? projectId : undefined);
    if (!spec || this.closed) return undefined;
    return this.get(spec, own ? projectId : "");
  }

  private get(spec: UpstreamSpec, owner: string): Upstream {
    const key = `${owner}\n${JSON.stringify(spec)}`;
    let u = this.upstreams.get(key);
    if (!u) {
      u = new Upstream(spec, this.gateway.log, (kind) => this.emit(spec.name, kind));
      this.upstreams.set(key, u);
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

  private emit(server: string, kind: ListKind): void {
    for (const fn of this.listeners) {
      try {
        fn(server, kind);
      } catch (err) {
        this.gateway.log.warn("mcp list_changed listener failed", { error: String(err) });
      }
    }
  }

  /** After a reload: close connections the new config no longer describes, and tell sessions the lists may differ. */
  private sync(): void {
    const config = this.gateway.config;
    if (config === this.seenConfig) return;
    const first = this.seenConfig === undefined;
    this.seenConfig = config;
    if (first) return;
    const wanted = new Set<string>();
    for (const name of enabledServers(config)) {
      wanted.add(`\n${JSON.stringify(upstreamSpec(config, name))}`);
      for (const pid of config.projects.keys()) {
        if (ownsCredentials(config, name, pid)) wanted.add(`${pid}\n${JSON.stringify(upstreamSpec(config, name, pid))}`);
      }
    }
    for (const [key, u] of this.upstreams) {
      if (wanted.has(key)) continue;
      this.upstreams.delete(key);
      void u.close();
    }
    for (const name of Object.keys(config.raw.mcp_servers ?? {})) this.emit(name, "tools");
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.upstreams.values()];
    this.upstreams.clear();
    await Promise.all(all.map((u) => u.close()));
  }
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
  if (Object.keys(gateway.config.raw.mcp_servers ?? {}).length) mcpOf(gateway).warm();
}
