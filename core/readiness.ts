// GET /readyz: may a load balancer send this replica traffic? 503 while the state store is unavailable (and
// requests would get 503 STORE_UNAVAILABLE), while a shutdown is under way, and — with
// server.ready_requires_current_config — while the config on disk failed its last reload. /healthz stays liveness.
import type { Gateway } from "./gateway.ts";
import { SplitLedgerStore } from "./store/ledger-split.ts";
import { workerCount } from "./worker-count.ts";

export interface Readiness {
  ready: boolean;
  body: Record<string, unknown>;
}

export async function readiness(gw: Gateway): Promise<Readiness> {
  // Anyone who reaches the API port may ask: states, reasons and counts only. The store's last error (its address)
  // and a refused reload's problems (file paths, config lines) are for an admin key: GET /admin/v1/config.
  const { error: _error, ...store } = await gw.store.status();
  const stale = gw.reloadProblems;
  const config = stale ? { status: "reload_refused", problems: stale.length } : { status: "ok" };
  const ready = store.up && !gw.draining && !(stale && gw.config.server.readyRequiresCurrentConfig);
  // A Postgres ledger that is down delays records (they wait in the spool); it never makes the replica unready.
  const ledger = gw.store.inner instanceof SplitLedgerStore ? gw.store.inner.ledgerStore.status() : undefined;
  return {
    ready,
    body: {
      status: ready ? "ready" : "not_ready",
      checks: { store: { status: store.up ? "up" : "down", ...store }, ...(ledger ? { ledger: { kind: "postgres", status: ledger.up ? "up" : "down", ...ledger } } : {}), config, shutdown: gw.draining, ...workersCheck() },
    },
  };
}

/** The answer during a shutdown (the server refuses everything else then). */
export const SHUTTING_DOWN = JSON.stringify({ status: "not_ready", checks: { shutdown: true } });

/**
 * With --workers N: how many listen. Fewer than started never makes this worker unready (it serves): the replica
 * runs on fewer cores until the missing one starts (the primary's log says why it does not).
 */
function workersCheck(): { workers?: Record<string, unknown> } {
  const c = workerCount();
  if (!c) return {};
  return { workers: { status: c.listening < c.configured ? "missing" : "all", listening: c.listening, configured: c.configured } };
}
