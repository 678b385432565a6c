// server.max_connections: how many client connections one process holds at once. Past it, a new connection is
// closed as soon as it is accepted, without a response (Node's net.Server maxConnections): answering would cost
// what the cap is there to bound. Connections that send nothing are closed by headers_timeout_ms, idle keep-alive
// ones by keep_alive_timeout_ms, so held slots come back. The default comes from the open-file limit: each client
// connection may need an upstream one besides.
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Counter } from "prom-client";
import type { Logger } from "../log.ts";

/** The default when the open-file limit is high (or unknown): above the 10 000 streams one process is sized for. */
export const MAX_CONNECTIONS_DEFAULT = 16_384;
/** Descriptors kept for everything that is not a client or upstream socket (store, logs, listeners, assets). */
const RESERVED_FDS = 64;

let fdLimit: number | null | undefined;

/** The process's soft open-file limit (Node raises it to the hard one at start), from /proc; null elsewhere. */
export function openFileLimit(): number | null {
  if (fdLimit !== undefined) return fdLimit;
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
    fdLimit = line && line !== "unlimited" ? Number(line) : null;
  } catch {
    fdLimit = null;
  }
  return fdLimit;
}

/** The most client connections the open-file limit can hold, each with an upstream connection. */
export function connectionsTheFdLimitAllows(): number | null {
  const limit = openFileLimit();
  return limit === null ? null : Math.max(1, Math.floor((limit - RESERVED_FDS) / 2));
}

export function defaultMaxConnections(): number {
  return Math.min(MAX_CONNECTIONS_DEFAULT, connectionsTheFdLimitAllows() ?? MAX_CONNECTIONS_DEFAULT);
}

/** How often a refused connection is logged: the first at once, then a count at most once a minute. */
const WARN_EVERY_MS = 60_000;

/** Apply the cap to the server: refused connections are counted and, sparingly, logged. */
export function capConnections(server: Server, cap: number, log: Logger, dropped: Counter): void {
  server.maxConnections = cap;
  const allows = connectionsTheFdLimitAllows();
  if (allows !== null && cap > allows) {
    log.warn(`server.max_connections ${cap} is more than the open-file limit (${openFileLimit()}) allows with an upstream connection each (${allows}): raise ulimit -n or lower it`);
  }
  let lastWarn = -Infinity;
  let since = 0;
  server.on("drop", () => {
    dropped.inc();
    since++;
    const now = Date.now();
    if (now - lastWarn < WARN_EVERY_MS) return;
    log.warn(`connection cap reached: ${since} new connection(s) closed unanswered (server.max_connections ${cap})`);
    lastWarn = now;
    since = 0;
  });
}
