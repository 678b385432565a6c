// The OTLP exporter behind the egress proxy: it speaks node:http, so it gets node Agents whose connections are CONNECT
// tunnels (core/net/proxy-tunnel.ts), one per protocol, made when it first exports and destroyed with the tracer.
import type { Agent } from "node:http";
import type { ProxyRoute } from "../net/egress-proxy.ts";
import { tunnelAgent } from "../net/proxy-tunnel.ts";

/** The exporter's default export timeout: the proxy must accept and answer CONNECT within it. */
const EXPORT_TIMEOUT_MS = 10_000;

export interface OtlpProxyAgents {
  /** The exporter's httpAgentOptions: the agent for "http:" or "https:". */
  agentFor(protocol: string): Agent;
  destroy(): void;
}

export function otlpProxyAgents(route: ProxyRoute): OtlpProxyAgents {
  const agents = new Map<string, Agent>();
  return {
    agentFor(protocol) {
      const p = protocol === "https:" ? "https:" : "http:";
      let a = agents.get(p);
      if (!a) agents.set(p, (a = tunnelAgent(route, p, EXPORT_TIMEOUT_MS)));
      return a;
    },
    destroy() {
      for (const a of agents.values()) a.destroy();
      agents.clear();
    },
  };
}
