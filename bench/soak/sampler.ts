// What the soak run samples from the gateway process every interval: RSS from /proc (what the OS charges, so a
// leak in native memory — sockets, SQLite, Buffers — shows too), open file descriptors, and from its own /metrics
// (prom-client's default collectors) heap, external memory, active handles and the event-loop delay histogram.
// prom-client resets that histogram at each scrape, so with nobody else scraping, each sample's p50/p99 cover
// exactly the interval since the previous one. Node's histogram records the time between two ticks of its timer,
// not the delay past the tick (idle, p50 reads 10.1 ms with prom-client's default 10 ms timer), so the timer period
// is subtracted: what is left is how late the event loop ran the timer.
import { readdirSync, readFileSync } from "node:fs";
import type { Pool } from "undici";

export interface Sample {
  /** Seconds since the traffic started. */
  t: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  fds: number;
  activeHandles: number;
  /** Event-loop delay over the interval, ms (past the histogram's 10 ms timer). */
  lagP50: number;
  lagP99: number;
  lagMax: number;
}

const MB = 1024 * 1024;
/** prom-client's default eventLoopMonitoringPrecision (core/metrics.ts does not change it). */
const ELD_TIMER_MS = 10;
const delayMs = (seconds: number) => Math.max(0, seconds * 1000 - ELD_TIMER_MS);

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Proportional set size: each page shared by k processes counts 1/k here (the node binary's code, shared libraries),
 * so PSS summed over processes is the memory they take together, where summed RSS counts shared pages once each. */
export function pssMb(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Unlabelled gauges of a Prometheus text exposition. */
export function parseGauges(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

export async function sample(pool: Pool, pid: number, t: number): Promise<Sample> {
  const g = parseGauges(await metricsText(pool));
  const get = (name: string) => g.get(name) ?? NaN;
  return {
    t,
    rssMb: rssMb(pid),
    heapUsedMb: get("nodejs_heap_size_used_bytes") / MB,
    heapTotalMb: get("nodejs_heap_size_total_bytes") / MB,
    externalMb: get("nodejs_external_memory_bytes") / MB,
    fds: fdCount(pid),
    activeHandles: get("nodejs_active_handles_total"),
    lagP50: delayMs(get("nodejs_eventloop_lag_p50_seconds")),
    lagP99: delayMs(get("nodejs_eventloop_lag_p99_seconds")),
    lagMax: delayMs(get("nodejs_eventloop_lag_max_seconds")),
  };
}

/** A labelled series summed by some of its labels, e.g. upstream attempts by provider and outcome. */
export function sumBy(text: string, name: string, labels: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf("} ");
    const got = new Map([...line.slice(name.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const key = labels.map((l) => `${l}=${got.get(l) ?? ""}`).join(" ");
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(close + 2)));
  }
  return out;
}

export async function metricsText(pool: Pool): Promise<string> {
  const r = await pool.request({ path: "/metrics", method: "GET", headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`/metrics answered ${r.statusCode}`);
  return text;
}
