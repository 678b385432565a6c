// Settings a running gateway reads once, when it starts: its listening socket and the HTTP server's timeouts and
// connection cap, where assets are kept, the store and its ledger, the logger, tracing and the metrics listener.
// A reload that changes one swaps in everything else and names what waits for a restart (core/gateway.ts): the
// log line says so, gateway_config_restart_pending is 1, and GET /admin/v1/config lists them.
import type { RuntimeConfig } from "./runtime.ts";
import { spoolDirOf, sqlitePathOf } from "../store/paths.ts";

const STORE_AT_START = ["kind", "path", "url", "prefix", "ledger", "spool_dir", "require_persistence", "fsync", "integrity_check", "probe_interval_ms"] as const;

/**
 * The store's files as the gateway opens them (defaults applied, resolved against the config's directory): the
 * documented default written out (store: { kind: sqlite, path: ./data/gateway.db }) is the same file as none.
 */
const STORE_FILES: Partial<Record<(typeof STORE_AT_START)[number], (c: RuntimeConfig) => unknown>> = {
  path: (c) => (c.store.kind === "sqlite" ? sqlitePathOf(c.store, c.dir) : c.store.path),
  spool_dir: (c) => spoolDirOf(c.store, c.dir),
};

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
  ...STORE_AT_START.map((k): [string, (c: RuntimeConfig) => unknown] => [`store.${k}`, STORE_FILES[k] ?? ((c) => (c.store as Record<string, unknown>)[k])]),
  ["log", (c) => c.raw.log],
  ["telemetry", (c) => c.raw.telemetry],
  ["metrics.listener", (c) => c.metrics.listener],
  ["metrics.host", (c) => c.metrics.host],
  ["metrics.port", (c) => c.metrics.port],
];

/** The top-level sections of gateway.yaml that hold a setting read only at start. */
export const RESTART_ONLY_SECTIONS: readonly string[] = [...new Set(AT_START.map(([name]) => name.split(".")[0]!))];

/** The settings read only at start in which `next` differs from the config the process started with. */
export function restartPending(started: RuntimeConfig, next: RuntimeConfig): string[] {
  return AT_START.filter(([, at]) => JSON.stringify(at(started)) !== JSON.stringify(at(next))).map(([name]) => name);
}

/**
 * `raw` (a gateway.yaml as parsed, `${VARS}` not yet resolved) with every setting read only at start set as `started`
 * has it (removed where `started` leaves it out). A worker that replaces one that died joins a gateway already
 * running: it must listen, keep its ledger and log where the others do, whatever the file says now. The setting names
 * above are their paths in gateway.yaml.
 */
export function withStartedSettings(raw: Record<string, unknown>, started: Record<string, unknown>): void {
  for (const [name] of AT_START) {
    const path = name.split(".");
    const value = valueAt(started, path);
    const parent = objectAt(raw, path.slice(0, -1), value !== undefined);
    if (!parent) continue;
    if (value === undefined) delete parent[path.at(-1)!];
    else parent[path.at(-1)!] = structuredClone(value);
  }
  // No store at the start (the default SQLite file): the file's later store section, its kind gone, is dropped whole.
  const store = raw.store as Record<string, unknown> | undefined;
  if (store && typeof store === "object" && store.kind === undefined) delete raw.store;
}

function valueAt(o: unknown, path: string[]): unknown {
  for (const k of path) o = o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined;
  return o;
}

/** The mapping at `path` in `o`; `create`: made where missing (else undefined). */
function objectAt(o: Record<string, unknown>, path: string[], create: boolean): Record<string, unknown> | undefined {
  for (const k of path) {
    const next = o[k];
    if (next && typeof next === "object" && !Array.isArray(next)) o = next as Record<string, unknown>;
    else if (create) o = o[k] = {};
    else return undefined;
  }
  return o;
}
