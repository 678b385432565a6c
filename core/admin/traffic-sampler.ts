// Live traffic for the admin API's /traffic (and the console's overview): every 10 s, read the counters and
// histograms the gateway already keeps for /metrics (requests by status, request duration, time to first byte,
// tokens, requests in flight) and keep the difference from the previous reading, for the last hour. Nothing is added
// to the request path: requests go on counting into the same Prometheus cells as before, and this reads them off it,
// like a scrape. A worker of `start --workers N` adds up every worker's reading, gathered through the primary as a
// scrape of /metrics is (core/cluster.ts), so its hour is the whole gateway's; a single process reads its own.
// Replicas each sample their own.
import type { Histogram } from "prom-client";
import type { Metrics } from "../metrics.ts";
import { clusterReadings, onClusterJoin } from "../observability/cluster-scrape.ts";

export const TRAFFIC_STEP_MS = 10_000;
/** One hour of steps. */
export const TRAFFIC_POINTS = 360;

export interface Quantiles { p50: number; p95: number }

/** What happened in one step (ending at `t`). */
export interface TrafficPoint {
  /** End of the step, ms since the epoch. */
  t: number;
  /** Length of the step in ms (about TRAFFIC_STEP_MS; longer when the event loop was busy). */
  ms: number;
  requests: number;
  /** By class of HTTP status. */
  ok: number;
  client_errors: number;
  server_errors: number;
  latency_ms: Quantiles | null;
  ttfb_ms: Quantiles | null;
  input_tokens: number;
  output_tokens: number;
  /** Requests being handled when the step ended. */
  in_flight: number;
}

interface Reading {
  at: number;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  /** Cumulative count per bucket upper bound (the last one is +Inf), summed over every label set. */
  duration: Map<number, number>;
  ttfb: Map<number, number>;
  inputTokens: number;
  outputTokens: number;
  inFlight: number;
}

/**
 * The q-quantile (0..1) of a histogram given as cumulative counts per upper bound, interpolated linearly inside its
 * bucket (as Prometheus's histogram_quantile does); null when empty. A quantile in the +Inf bucket is the largest
 * finite bound. Exported for its unit test.
 */
export function histogramQuantile(q: number, cumulative: Map<number, number>): number | null {
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  const total = bounds.length ? cumulative.get(bounds[bounds.length - 1]!)! : 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const upper of bounds) {
    const count = cumulative.get(upper)!;
    if (count >= rank) {
      if (upper === Infinity) return lower;
      const inBucket = count - below;
      return inBucket > 0 ? lower + ((upper - lower) * (rank - below)) / inBucket : upper;
    }
    lower = upper;
    below = count;
  }
  return lower;
}

/** Cumulative counts per upper bound summed over label sets, from get() (which copies every bucket's labels). */
export async function bucketsFromGet(h: Histogram<string>): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const v of (await h.get()).values) {
    if (!v.metricName?.endsWith("_bucket")) continue;
    const le = v.labels.le === "+Inf" ? Infinity : Number(v.labels.le);
    out.set(le, (out.get(le) ?? 0) + v.value);
  }
  return out;
}

type HistogramState = Record<string, { bucketValues?: Record<string, number>; count?: number }>;

/**
 * The same, read from prom-client's per-label-set state (`hashMap`: the count per upper bound, not cumulative, and
 * the total count) instead of get(): ~0.1 ms against ~4 ms for a gateway with 500 label sets, every 10 s. get() is
 * the fallback should that state ever look different (the unit test holds the two to the same answer).
 */
export async function cumulativeBuckets(h: Histogram<string>): Promise<Map<number, number>> {
  const state = (h as unknown as { hashMap?: HistogramState }).hashMap;
  const entries = state && typeof state === "object" ? Object.values(state) : undefined;
  if (!entries?.every((e) => typeof e?.count === "number" && e.bucketValues && typeof e.bucketValues === "object")) return bucketsFromGet(h);
  const perBound: Record<string, number> = {};
  let total = 0;
  for (const e of entries) {
    total += e.count!;
    const b = e.bucketValues!;
    for (const le in b) perBound[le] = (perBound[le] ?? 0) + b[le]!;
  }
  const out = new Map<number, number>();
  let acc = 0;
  for (const le of Object.keys(perBound).sort((a, b) => Number(a) - Number(b))) out.set(Number(le), (acc += perBound[le]!));
  out.set(Infinity, total);
  return out;
}

async function read(m: Metrics, at: number): Promise<Reading> {
  let ok = 0, clientErrors = 0, serverErrors = 0;
  for (const v of (await m.requests.counter.get()).values) {
    const code = Number(v.labels.code);
    if (code >= 500) serverErrors += v.value;
    else if (code >= 400) clientErrors += v.value;
    else ok += v.value;
  }
  let inputTokens = 0, outputTokens = 0;
  for (const v of (await m.tokens.counter.get()).values) {
    if (v.labels.direction === "input") inputTokens += v.value;
    else if (v.labels.direction === "output") outputTokens += v.value;
  }
  let inFlight = 0;
  for (const v of (await m.inFlight.gauge.get()).values) inFlight += v.value;
  return {
    at, ok, clientErrors, serverErrors, inputTokens, outputTokens, inFlight,
    duration: await cumulativeBuckets(m.duration as Histogram<string>),
    ttfb: await cumulativeBuckets(m.ttfb as Histogram<string>),
  };
}

/**
 * A worker's reading as it crosses to the primary and back (JSON over the cluster's IPC channel): the bucket maps as
 * [upper bound, cumulative count] pairs, +Inf as null. A few hundred bytes, whatever the number of label sets.
 */
export interface WireReading {
  ok: number;
  clientErrors: number;
  serverErrors: number;
  inputTokens: number;
  outputTokens: number;
  inFlight: number;
  duration: [number | null, number][];
  ttfb: [number | null, number][];
}

const toPairs = (m: Map<number, number>): [number | null, number][] => [...m].map(([le, n]) => [le === Infinity ? null : le, n]);

/** This process's reading, for a worker's part of the cluster's (core/cluster.ts). */
export async function wireReading(m: Metrics): Promise<WireReading> {
  const { at: _at, duration, ttfb, ...counts } = await read(m, 0);
  return { ...counts, duration: toPairs(duration), ttfb: toPairs(ttfb) };
}

/**
 * Wire readings added up (parts of another shape are left out); without `inFlight` for a total of dead workers, whose
 * counts stay while the requests they had in flight are gone (core/cluster.ts keeps one).
 */
export function addReadings(parts: unknown[], o: { inFlight: boolean } = { inFlight: true }): WireReading {
  const sum = { ok: 0, clientErrors: 0, serverErrors: 0, inputTokens: 0, outputTokens: 0, inFlight: 0 };
  const duration = new Map<number, number>(), ttfb = new Map<number, number>();
  const addPairs = (into: Map<number, number>, pairs: unknown) => {
    if (!Array.isArray(pairs)) return;
    for (const [le, n] of pairs as [number | null, number][]) {
      const bound = le === null ? Infinity : le;
      into.set(bound, (into.get(bound) ?? 0) + n);
    }
  };
  for (const part of parts) {
    const w = part as Partial<WireReading> | null;
    if (!w || typeof w.ok !== "number") continue;
    sum.ok += w.ok;
    sum.clientErrors += w.clientErrors ?? 0;
    sum.serverErrors += w.serverErrors ?? 0;
    sum.inputTokens += w.inputTokens ?? 0;
    sum.outputTokens += w.outputTokens ?? 0;
    if (o.inFlight) sum.inFlight += w.inFlight ?? 0;
    addPairs(duration, w.duration);
    addPairs(ttfb, w.ttfb);
  }
  return { ...sum, duration: toPairs(duration), ttfb: toPairs(ttfb) };
}

/** The workers' readings added up: the whole cluster's reading at `at`. */
function sumReadings(parts: unknown[], at: number): Reading {
  const { duration, ttfb, ...counts } = addReadings(parts);
  const fromPairs = (pairs: [number | null, number][]) => new Map(pairs.map(([le, n]) => [le === null ? Infinity : le, n]));
  return { at, ...counts, duration: fromPairs(duration), ttfb: fromPairs(ttfb) };
}

/**
 * Growth between two readings. Summed over workers a count does not fall (the primary counts a worker that misses a
 * gather with its last reading, and a dead one's in a retired total: core/cluster.ts); should one ever fall, that
 * step counts no less than nothing.
 */
const grown = (now: number, before: number) => Math.max(0, now - before);

function quantilesMs(now: Map<number, number>, before: Map<number, number>): Quantiles | null {
  const delta = new Map<number, number>();
  for (const [le, n] of now) delta.set(le, grown(n, before.get(le) ?? 0));
  const p50 = histogramQuantile(0.5, delta);
  const p95 = histogramQuantile(0.95, delta);
  if (p50 === null || p95 === null) return null;
  return { p50: Math.round(p50 * 10_000) / 10, p95: Math.round(p95 * 10_000) / 10 };
}

function step(a: Reading, b: Reading): TrafficPoint {
  const ok = grown(b.ok, a.ok), clientErrors = grown(b.clientErrors, a.clientErrors), serverErrors = grown(b.serverErrors, a.serverErrors);
  return {
    t: b.at, ms: b.at - a.at, requests: ok + clientErrors + serverErrors, ok, client_errors: clientErrors, server_errors: serverErrors,
    latency_ms: quantilesMs(b.duration, a.duration), ttfb_ms: quantilesMs(b.ttfb, a.ttfb),
    input_tokens: grown(b.inputTokens, a.inputTokens), output_tokens: grown(b.outputTokens, a.outputTokens), in_flight: b.inFlight,
  };
}

export type TrafficScope = "process" | "cluster";

export class TrafficSampler {
  private last?: Reading;
  private kept: TrafficPoint[] = [];
  private timer?: NodeJS.Timeout;
  private leaveJoin?: () => void;
  private busy = false;
  /** A reading asked for while one was in progress (the cluster joined meanwhile): taken when that one ends. */
  private again = false;
  /** When the first reading was taken: the points go back to it at most. */
  startedAt?: number;
  /** Whose figures the points are: this process's, or every worker's (their readings added up). */
  scope: TrafficScope = "process";

  constructor(
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
    /** Every worker's reading (WireReading), when this process is a worker that has joined a cluster. */
    private readonly cluster: () => (() => Promise<unknown[]>) | undefined = () => clusterReadings,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sample(), TRAFFIC_STEP_MS);
    this.timer.unref();
    // A worker joins its cluster just after it starts listening: read the cluster's figures at once, so its hour
    // starts then rather than at the next step.
    this.leaveJoin = onClusterJoin(() => void this.sample());
    void this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.leaveJoin?.();
  }

  /** Take a reading and keep the step since the previous one (one in progress is not overlapped: this one follows it). */
  async sample(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      const at = this.now();
      const gather = this.cluster();
      let r: Reading;
      try {
        r = gather ? sumReadings(await gather(), at) : await read(this.metrics, at);
      } catch {
        return; // the cluster did not answer (a worker down, the primary busy): the next step spans both
      }
      const scope: TrafficScope = gather ? "cluster" : "process";
      // One process's counts and the cluster's do not subtract: start over when the source changes (a worker samples
      // from its start, core/app.ts, a moment before it joins the cluster).
      if (scope !== this.scope) {
        this.scope = scope;
        this.last = undefined;
        this.kept = [];
      }
      if (this.last) this.kept.push(step(this.last, r));
      else this.startedAt = r.at;
      this.last = r;
      if (this.kept.length > TRAFFIC_POINTS) this.kept.splice(0, this.kept.length - TRAFFIC_POINTS);
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        void this.sample();
      }
    }
  }

  /** The kept steps ending after `after` (ms), oldest first. */
  points(after = 0): TrafficPoint[] {
    return this.kept.filter((p) => p.t > after);
  }
}

const samplers = new WeakMap<object, TrafficSampler>();

/** The gateway's sampler, started on first use; stopped when the gateway closes. */
export function trafficOf(gateway: { metrics: Metrics; onClose(fn: () => void): void }): TrafficSampler {
  let s = samplers.get(gateway);
  if (!s) {
    const sampler = new TrafficSampler(gateway.metrics);
    samplers.set(gateway, sampler);
    gateway.onClose(() => sampler.stop());
    sampler.start();
    s = sampler;
  }
  return s;
}
