// Settings a running gateway reads once, when it starts: its listening socket and the HTTP server's timeouts and
// connection cap, where assets are kept, the store and its ledger, the logger, tracing and the metrics listener.
// A reload that changes one swaps in everything else and names what waits for a restart (core/gateway.ts): the
// log line says so, gateway_config_restart_pending is 1, and GET /admin/v1/config lists them.
import type { RuntimeConfig } from "./runtime.ts";

const STORE_AT_START = ["kind", "path", "url", "prefix", "ledger", "spool_dir", "require_persistence", "fsync", "integrity_check", "probe_interval_ms"] as const;

/** Each setting read only at start, and where a runtime config holds it (defaults applied where the config has them). */
const AT_START: Array<[string, (c: RuntimeConfig) => unknown]> = [
  ["server.host", (c) => c.server.host],
  ["server.port", (c) => c.server.port],
  ["server.headers_timeout_ms", (c) => c.server.headersTimeoutMs],
  ["server.request_timeout_ms", (c) => c.server.requestTimeoutMs],
  ["server.keep_alive_timeout_ms", (c) => c.server.keepAliveTimeoutMs],
  ["server.max_header_bytes", (c) => c.server.maxHeaderBytes],
  ["server.max_connections", (c) => c.server.maxConnections],
  ["server.assets_dir", (c) => c.raw.server?.assets_dir],
  ...STORE_AT_START.map((k): [string, (c: RuntimeConfig) => unknown] => [`store.${k}`, (c) => (c.store as Record<string, unknown>)[k]]),
  ["log", (c) => c.raw.log],
  ["telemetry", (c) => c.raw.telemetry],
  ["metrics.listener", (c) => c.metrics.listener],
  ["metrics.host", (c) => c.metrics.host],
  ["metrics.port", (c) => c.metrics.port],
];

/** The settings read only at start in which `next` differs from the config the process started with. */
export function restartPending(started: RuntimeConfig, next: RuntimeConfig): string[] {
  return AT_START.filter(([, at]) => JSON.stringify(at(started)) !== JSON.stringify(at(next))).map(([name]) => name);
}
