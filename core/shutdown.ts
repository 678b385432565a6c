// Graceful shutdown (SIGTERM/SIGINT): stop accepting, let requests and streams in flight finish within the grace
// period, then cut what is left with the protocol's error event — every cut request still writes its ledger
// record — and close the gateway (which flushes and closes the store).
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { settleWithin } from "./deadline.ts";
import { GatewayError } from "./errors.ts";
import type { Logger } from "./log.ts";
import type { RequestAbort } from "./net/request-abort.ts";
import type { ScrapeWatch } from "./scrape-watch.ts";

/** Requests inside handleRequest, from arrival until their onFinish callbacks (the ledger write) have run. */
export class InFlight {
  private readonly live = new Set<RequestAbort>();
  private waiters: Array<() => void> = [];

  enter(c: RequestAbort): void {
    this.live.add(c);
  }

  leave(c: RequestAbort): void {
    this.live.delete(c);
    if (this.live.size === 0 && this.waiters.length) for (const w of this.waiters.splice(0)) w();
  }

  get size(): number {
    return this.live.size;
  }

  /** Resolves when no request is in flight. */
  idle(): Promise<void> {
    return this.live.size === 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  /** Abort every request in flight with `reason`: upstream calls stop, streams end with the error event. */
  cut(reason: GatewayError): number {
    let n = 0;
    for (const c of this.live) {
      if (c.signal.aborted) continue;
      c.abort(reason);
      n++;
    }
    return n;
  }
}

const cuts = new WeakSet<object>();

/**
 * The error a request cut by shutdown ends with. The spec's error table has no 503 code of its own: INTERNAL
 * ("service fault") with status 503 tells clients and load balancers the service, not the request, failed,
 * and the SDKs retry it.
 */
export function shutdownError(): GatewayError {
  const err = new GatewayError(503, "INTERNAL", "The gateway is shutting down; retry the request", { retryAfter: 1, headers: { connection: "close" } });
  cuts.add(err);
  return err;
}

/**
 * Mark `err` as a cut of the gateway's own, handled as a shutdown's is: the client gets it, the ledger records an
 * error (not a client that left), and the error line is the cutter's to write. For the pipeline cancelling what a
 * plugin left running (core/pipeline/compose.ts).
 */
export function gatewayCut(err: GatewayError): GatewayError {
  cuts.add(err);
  return err;
}

/** Whether `err` is a shutdown's 503 (a cut, or a retry refused during the drain): the gateway stopping, no fault. */
export function isShutdownError(err: unknown): err is GatewayError {
  return typeof err === "object" && err !== null && cuts.has(err);
}

/** The error when this signal was aborted by a shutdown cut, or another gatewayCut (not by the client leaving). */
export function shutdownCut(signal: AbortSignal): GatewayError | undefined {
  return signal.aborted && cuts.has(signal.reason as object) ? (signal.reason as GatewayError) : undefined;
}

export interface Drainable {
  server: Server;
  sockets: Set<Socket>;
  inflight: InFlight;
  log: Logger;
  /** From now on: new requests are refused with 503, responses not yet started carry `connection: close`. */
  startDraining(): void;
  /** Close the gateway itself: plugins, pools, the store (flushing the ledger). */
  closeGateway(): Promise<void>;
  /**
   * The metrics listener, closed last: once the gateway has closed (the ledger safe), it stays up until it has answered
   * one more scrape, so the counts the drain made (the streams it cut, their 503s, tokens and cost) reach Prometheus.
   */
  metrics?: { scrapes: ScrapeWatch; close(): Promise<void> };
}

/** How long requests that ignore the cut (a client that stopped reading) may take before their sockets go. */
const AFTER_CUT_MS = 5000;

/** Whether `p` settled within `ms`. */
const within = (p: Promise<unknown>, ms: number): Promise<boolean> => settleWithin(p.then(() => true), ms, () => false);


/**
 * Cut every request in flight and wait, at most AFTER_CUT_MS, for each to finish its way out: a cut request still
 * writes its record (an error with its 503, a stream as stream_error), so the store must stay open until it has.
 * Whether all of them finished.
 */
export async function cutAndSettle(inflight: InFlight, reason: GatewayError): Promise<boolean> {
  inflight.cut(reason);
  return within(inflight.idle(), AFTER_CUT_MS);
}

/**
 * Keep the metrics listener for one more scrape, then close it: only when a scrape interval has been seen (two scrapes
 * or more: one readiness curl is no scraper) and something was counted since the last scrape read the counts. The
 * wait ends at the latest one scrape interval and a second after the grace period, counted from the signal (the
 * interval: the longest recent one, at most the grace period), so the cut's settling and the store's close come out
 * of it and the whole shutdown keeps to `shutdown_grace_ms` + one interval + 1 s, what a stopper is sized for (README
 * "Health and readiness"). The gateway is closed by then, so a stopper that kills the process meanwhile costs only
 * the scrape.
 */
async function lastScrape(t: Drainable, graceMs: number, started: number): Promise<void> {
  const m = t.metrics;
  if (!m) return;
  const upTo = m.scrapes.nextWithinMs(graceMs);
  const ms = upTo === undefined ? 0 : Math.min(upTo, started + graceMs + upTo - performance.now());
  if (ms > 0) {
    t.log.info("keeping /metrics up for one more scrape, so it reads what the drain counted", { withinMs: Math.round(ms) });
    if (!(await m.scrapes.next(ms))) t.log.info("no scrape came; the drain's counts are in the ledger only", { waitedMs: Math.round(ms) });
  } else if (upTo !== undefined) {
    t.log.info("no time left for one more scrape; the drain's counts are in the ledger only", { graceMs, scrapeWithinMs: Math.round(upTo) });
  }
  await m.close();
}

export async function drain(t: Drainable, graceMs: number): Promise<void> {
  const started = performance.now();
  t.log.info("shutting down: no new connections; waiting for requests in flight", { inFlight: t.inflight.size, connections: t.sockets.size, graceMs });
  t.startDraining();
  const closed = new Promise<void>((resolve) => t.server.close(() => resolve()));
  t.server.closeIdleConnections();
  const settled = Promise.all([closed, t.inflight.idle()]);
  let cut = 0;
  if (!(await within(settled, graceMs))) {
    cut = t.inflight.cut(shutdownError());
    if (!(await within(settled, AFTER_CUT_MS))) {
      // Stuck writes (a client that stopped reading): drop their sockets; their records are still written
      // by the request's own finish path, which gets one more bounded wait.
      for (const s of t.sockets) s.destroy();
      await within(t.inflight.idle(), AFTER_CUT_MS);
    }
  }
  for (const s of t.sockets) s.destroy();
  await closed;
  const left = t.inflight.size;
  // A close that fails (ledger records that could be saved nowhere) still ends the shutdown, but not as a clean one:
  // the caller exits non-zero.
  let failed: unknown;
  await t.closeGateway().catch((err) => (failed = err ?? new Error("closing the gateway failed")));
  await lastScrape(t, graceMs, started);
  const fields = { ms: Math.round(performance.now() - started), cutAtGrace: cut, ...(left ? { unfinished: left } : {}) };
  if (failed === undefined) return t.log.info("shutdown complete", fields);
  t.log.error("shutdown complete, with an error", { ...fields, error: String((failed as Error)?.message ?? failed) });
  throw failed;
}
