// The soak run's leak criterion. RSS of a healthy Node process climbs for the first minute or two (JIT, heap
// growing to its working size, connection pools, SQLite page cache) and then moves up and down with GC around a
// plateau. A leak keeps climbing. So the run is judged on the part after warm-up only, two ways, and fails on either:
//   slope  — Theil–Sen slope (median of all pairwise slopes, so one GC spike moves it little) of RSS over the
//            second half of the run above maxSlopeMbPerMin, AND over the last quarter above half of it: a leak climbs
//            in both, while a one-off step (V8 growing the heap once) in the third quarter leaves the last flat;
//   growth — RSS at the end (median of the last 3 samples) above maxGrowth × RSS at the warm-up mark (median of the
//            3 samples nearest to it; the mark is 2 minutes, or 20 % of shorter runs).
// Runs shorter than MIN_JUDGED_MINUTES are reported but not judged: their second half is still warm-up.
export const MIN_JUDGED_MINUTES = 4;

export interface Point { t: number; v: number } // t in seconds

export function theilSenSlope(points: Point[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const dt = points[j]!.t - points[i]!.t;
      if (dt > 0) slopes.push((points[j]!.v - points[i]!.v) / dt);
    }
  }
  return median(slopes);
}

export function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median of the (up to) 3 values nearest to time t. */
export function valueAt(points: Point[], t: number): number {
  const near = [...points].sort((a, b) => Math.abs(a.t - t) - Math.abs(b.t - t)).slice(0, 3);
  return median(near.map((p) => p.v));
}

export interface LeakVerdict {
  judged: boolean;
  /** MB per minute over the second half and over the last quarter. */
  slope: number;
  lastQuarterSlope: number;
  markS: number;
  atMark: number;
  atEnd: number;
  growth: number;
  failures: string[];
}

export function judgeRss(points: Point[], durationS: number, maxSlopeMbPerMin: number, maxGrowth: number): LeakVerdict {
  const markS = Math.min(120, 0.2 * durationS);
  const secondHalf = points.filter((p) => p.t >= durationS / 2);
  const slope = theilSenSlope(secondHalf) * 60;
  const lastQuarterSlope = theilSenSlope(points.filter((p) => p.t >= durationS * 0.75)) * 60;
  const atMark = valueAt(points, markS);
  const atEnd = median(points.slice(-3).map((p) => p.v));
  const growth = atEnd / atMark;
  const judged = durationS >= MIN_JUDGED_MINUTES * 60;
  const failures: string[] = [];
  if (judged && slope > maxSlopeMbPerMin && lastQuarterSlope > maxSlopeMbPerMin / 2) {
    failures.push(`RSS still growing: ${slope.toFixed(2)} MB/min over the second half > ${maxSlopeMbPerMin}, ${lastQuarterSlope.toFixed(2)} MB/min over the last quarter > ${maxSlopeMbPerMin / 2}`);
  }
  if (judged && growth > maxGrowth) failures.push(`RSS at the end ${atEnd.toFixed(1)} MB > ${maxGrowth} x RSS at ${markS} s (${atMark.toFixed(1)} MB)`);
  return { judged, slope, lastQuarterSlope, markS, atMark, atEnd, growth, failures };
}
