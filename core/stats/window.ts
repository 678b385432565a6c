// Live per-endpoint statistics in bounded memory: time-to-first-token and tokens/second histograms in 5-minute
// slots (the last 12 make "last 1h"), and success/attempt counts in hour slots (the last 24 make "last 1d").
// Old slots are dropped as new ones start, so memory depends on the number of endpoints, not on traffic.
import { add, merge, percentiles, type Counts } from "./histogram.ts";

export const MINUTE_SLOT_MS = 5 * 60_000;
export const HOUR_SLOT_MS = 60 * 60_000;
export const MINUTE_SLOTS = 12;
export const HOUR_SLOTS = 24;

export interface AttemptSample {
  model: string;
  provider: string;
  /** Did the attempt succeed (a complete response; for streams, the whole stream)? */
  ok: boolean;
  /** Time to first token of a streamed attempt, ms from sending the upstream request. */
  ttftMs?: number;
  /** Output tokens per second after the first token, for streamed attempts. */
  tokensPerSecond?: number;
}

export interface Percentiles { p50: number; p95: number }

/** The spec's per-endpoint live fields; null until there is data. */
export interface EndpointStats {
  throughput_last_1h: Percentiles | null;
  latency_last_1h: Percentiles | null;
  uptime_last_1d: number | null;
}

export interface SlotData { ttft: Counts; tps: Counts }
export interface HourData { ok: number; n: number }

export class EndpointWindow {
  readonly minutes = new Map<number, SlotData>();
  readonly hours = new Map<number, HourData>();

  record(s: AttemptSample, now: number): void {
    const m = Math.floor(now / MINUTE_SLOT_MS);
    const h = Math.floor(now / HOUR_SLOT_MS);
    if (s.ttftMs !== undefined || s.tokensPerSecond !== undefined) {
      let slot = this.minutes.get(m);
      if (!slot) {
        slot = { ttft: new Map(), tps: new Map() };
        this.minutes.set(m, slot);
        for (const k of this.minutes.keys()) if (k <= m - MINUTE_SLOTS) this.minutes.delete(k);
      }
      if (s.ttftMs !== undefined) add(slot.ttft, s.ttftMs);
      if (s.tokensPerSecond !== undefined) add(slot.tps, s.tokensPerSecond);
    }
    let hour = this.hours.get(h);
    if (!hour) {
      hour = { ok: 0, n: 0 };
      this.hours.set(h, hour);
      for (const k of this.hours.keys()) if (k <= h - HOUR_SLOTS) this.hours.delete(k);
    }
    hour.n++;
    if (s.ok) hour.ok++;
  }

  read(now: number): EndpointStats {
    return summarize(this.minutes, this.hours, now);
  }
}

/** Summary of slot maps (local ones, or ones read back from Redis). */
export function summarize(minutes: Map<number, SlotData>, hours: Map<number, HourData>, now: number): EndpointStats {
  const m = Math.floor(now / MINUTE_SLOT_MS);
  const h = Math.floor(now / HOUR_SLOT_MS);
  const ttft: Counts = new Map();
  const tps: Counts = new Map();
  for (const [k, slot] of minutes) {
    if (k > m - MINUTE_SLOTS && k <= m) {
      merge(ttft, slot.ttft);
      merge(tps, slot.tps);
    }
  }
  let ok = 0;
  let n = 0;
  for (const [k, hour] of hours) {
    if (k > h - HOUR_SLOTS && k <= h) {
      ok += hour.ok;
      n += hour.n;
    }
  }
  return {
    throughput_last_1h: percentiles(tps),
    latency_last_1h: percentiles(ttft),
    uptime_last_1d: n ? Math.round((ok / n) * 10_000) / 10_000 : null,
  };
}
