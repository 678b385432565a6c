// A log-bucketed histogram: values land in buckets 4% wide, so any quantile is within ~2% of the truth and the
// memory per histogram is bounded by the value range (a few hundred buckets at most), never by the traffic.
// Buckets are plain integer keys, so histograms merge by adding counts (also across replicas, in Redis).

const GROWTH = 1.04;
const LOG_GROWTH = Math.log(GROWTH);
/** Values are clamped to [MIN, MAX] (ms or tokens/s): 0.01 .. 10^7. */
const MIN = 0.01;
const MAX = 1e7;

export function bucketOf(value: number): number {
  const v = Math.min(MAX, Math.max(MIN, value));
  return Math.round(Math.log(v) / LOG_GROWTH);
}

export function valueOf(bucket: number): number {
  return Math.exp(bucket * LOG_GROWTH);
}

export type Counts = Map<number, number>;

export function add(counts: Counts, value: number, n = 1): void {
  if (!Number.isFinite(value) || value < 0) return;
  const b = bucketOf(value);
  counts.set(b, (counts.get(b) ?? 0) + n);
}

export function merge(into: Counts, from: Counts): void {
  for (const [b, n] of from) into.set(b, (into.get(b) ?? 0) + n);
}

/** The q-quantile (0..1) by nearest rank; null when empty. */
export function quantile(counts: Counts, q: number): number | null {
  let total = 0;
  for (const n of counts.values()) total += n;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  const keys = [...counts.keys()].sort((a, b) => a - b);
  let seen = 0;
  for (const k of keys) {
    seen += counts.get(k)!;
    if (seen >= rank) return valueOf(k);
  }
  return valueOf(keys[keys.length - 1]!);
}

export function percentiles(counts: Counts, digits = 1): { p50: number; p95: number } | null {
  const p50 = quantile(counts, 0.5);
  const p95 = quantile(counts, 0.95);
  if (p50 === null || p95 === null) return null;
  const f = 10 ** digits;
  return { p50: Math.round(p50 * f) / f, p95: Math.round(p95 * f) / f };
}
