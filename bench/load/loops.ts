// The two load shapes. Open loop: requests leave on a fixed schedule whatever the server does, and latency is
// measured from the *scheduled* send time, so a stall shows up in every request it delayed (no coordinated
// omission). Closed loop: N connections, each sends its next request when the previous one finished (saturation).
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { Pool } from "undici";
import { send, type LoadTarget } from "./client.ts";

export interface PhaseOptions {
  stream: boolean;
  body: string;
  warmupMs: number;
  durationMs: number;
  /** Longest wait for requests still in flight when the measured window ends (they count as errors). */
  drainMs?: number;
  /** Fraction of requests whose client hangs up after the first body bytes (not counted as errors). */
  abortRate?: number;
  /** Called when the measured window opens and closes (the runner samples process CPU time there). */
  onWindow?: (edge: "start" | "end") => void;
}

export interface Result {
  target: string;
  mode: "open" | "closed";
  stream: boolean;
  /** Requests measured (scheduled/started inside the window). */
  requests: number;
  errors: number;
  /** Requests the generator hung up on on purpose (--abort-rate). */
  aborted: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Median time to response headers (ms). */
  ttfbP50: number;
  /** CPU ms the target's server process used per measured request (warmup excluded). */
  cpuMsPerReq?: number;
  /** Same for the fake upstream process, for reference. */
  upstreamCpuMsPerReq?: number;
  /** Read- and write-family system calls of the target's processes per measured request (/proc/PID/io). */
  sysReadsPerReq?: number;
  sysWritesPerReq?: number;
  offeredRps?: number;
  concurrency?: number;
}

/** Deterministic spread: request n is picked when floor(n * rate) advances. */
export const picked = (n: number, rate: number | undefined) => !!rate && Math.floor((n + 1) * rate) > Math.floor(n * rate);

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

function summarise(lat: number[], ttfb: number[], base: Omit<Result, "p50" | "p90" | "p99" | "max" | "ttfbP50">): Result {
  const s = Float64Array.from(lat).sort();
  const t = Float64Array.from(ttfb).sort();
  return { ...base, p50: percentile(s, 0.5), p90: percentile(s, 0.9), p99: percentile(s, 0.99), max: s.length ? s[s.length - 1]! : NaN, ttfbP50: percentile(t, 0.5) };
}

export async function openLoop(pool: Pool, target: LoadTarget, rate: number, o: PhaseOptions): Promise<Result> {
  const interval = 1000 / rate;
  const total = Math.round(((o.warmupMs + o.durationMs) / 1000) * rate);
  const t0 = performance.now() + 5;
  const warmupN = Math.round((o.warmupMs / 1000) * rate); // requests before this index are warm-up
  const lat: number[] = [];
  const ttfb: number[] = [];
  let errors = 0;
  let aborted = 0;
  let measured = 0;
  let outstanding = 0;
  let next = 0;
  await new Promise<void>((resolve) => {
    const fire = (scheduled: number, n: number) => {
      outstanding++;
      send(pool, target, o.body, o.stream, (d) => {
        outstanding--;
        if (n >= warmupN) {
          measured++;
          if (d.aborted) aborted++;
          else if (d.ok) {
            lat.push(d.endAt - scheduled);
            ttfb.push(d.headersAt - scheduled);
          } else errors++;
        }
      }, picked(n, o.abortRate));
    };
    // setTimeout has ~1 ms granularity: each tick sends everything that is due, stamped with its scheduled time.
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * interval <= now) fire(t0 + next * interval, next++);
      if (next < total) setTimeout(tick, Math.max(0, t0 + next * interval - performance.now()));
      else resolve();
    };
    setTimeout(tick, 5);
    setTimeout(() => o.onWindow?.("start"), o.warmupMs + 5);
  });
  const deadline = performance.now() + (o.drainMs ?? 10_000);
  while (outstanding > 0 && performance.now() < deadline) await sleep(2);
  o.onWindow?.("end");
  const scheduledInWindow = total - warmupN;
  const lost = Math.max(0, scheduledInWindow - measured); // still in flight at the drain deadline: errors
  return summarise(lat, ttfb, {
    target: target.name, mode: "open", stream: o.stream, requests: scheduledInWindow, errors: errors + lost, aborted,
    rps: lat.length / (o.durationMs / 1000), offeredRps: rate,
  });
}

export async function closedLoop(pool: Pool, target: LoadTarget, concurrency: number, o: PhaseOptions): Promise<Result> {
  const t0 = performance.now();
  const measureFrom = t0 + o.warmupMs;
  const end = measureFrom + o.durationMs;
  const lat: number[] = [];
  const ttfb: number[] = [];
  let errors = 0;
  let aborted = 0;
  let sent = 0;
  let completedInWindow = 0;
  const worker = () => new Promise<void>((resolve) => {
    const loop = () => {
      const start = performance.now();
      if (start >= end) return resolve();
      send(pool, target, o.body, o.stream, (d) => {
        if (start >= measureFrom && d.endAt <= end) {
          completedInWindow++;
          if (d.aborted) aborted++;
          else if (d.ok) {
            lat.push(d.endAt - start);
            ttfb.push(d.headersAt - start);
          } else errors++;
        }
        // Next request from a fresh stack: undici may call back synchronously on errors.
        if (d.ok) loop();
        else setImmediate(loop);
      }, picked(sent++, o.abortRate));
    };
    loop();
  });
  // Window edges from timers; the end edge is also taken when the workers finish first (same loop turn).
  let edge = 0;
  const mark = (to: number) => {
    while (edge < to) o.onWindow?.(edge++ === 0 ? "start" : "end");
  };
  const opened = setTimeout(() => mark(1), o.warmupMs);
  const closed = setTimeout(() => mark(2), o.warmupMs + o.durationMs);
  await Promise.race([Promise.all(Array.from({ length: concurrency }, worker)), sleep(o.warmupMs + o.durationMs + (o.drainMs ?? 10_000))]);
  mark(2);
  clearTimeout(opened);
  clearTimeout(closed);
  return summarise(lat, ttfb, {
    target: target.name, mode: "closed", stream: o.stream, requests: completedInWindow, errors, aborted,
    rps: lat.length / (o.durationMs / 1000), concurrency,
  });
}
